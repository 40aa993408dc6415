/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A ClickHouse server's HTTP interface over libcurl: one SQL statement per
 * request (the statement in the URL's query parameter, INSERT data in the
 * POST body), with retries and back-off for a store that is down or slow.
 */
#ifndef PRECORD_FLEET_HTTP_H
#define PRECORD_FLEET_HTTP_H

#include <stdbool.h>
#include <stddef.h>

#include "util/buf.h"

struct ch_conn;

/*
 * url: http://HOST:PORT/ (a path or ?settings may follow).  NULL + errno.
 * The user and password come from PRECORD_CH_USER and PRECORD_CH_PASSWORD
 * when set (before the URL's user:password@); messages show the URL
 * without its password (ch_conn__url).
 */
struct ch_conn *ch_conn__new(const char *url);
void ch_conn__free(struct ch_conn *c);

/*
 * Attempts for a request that failed on the way (refused, reset, timed
 * out, or a ClickHouse error that says "try again"): 1 means no retry.
 * The waits between attempts start at first_ms and double.
 */
void ch_conn__set_retry(struct ch_conn *c, int attempts, int first_ms);
/* Seconds a request may take (connect: at most 5 s of it). */
void ch_conn__set_timeout(struct ch_conn *c, long secs);

/*
 * The most an answer may hold: a query's rows, and what the store says to
 * an insert (a line, or an error).  A longer answer is not read further
 * (precord runs as root on every host: the store's answers are bounded
 * like its inputs).
 */
#define CH_ANSWER_MAX_QUERY	(64u << 20)
#define CH_ANSWER_MAX_INSERT	(1u << 20)

/*
 * Run sql with body (NULL: none) as its data; the answer into out
 * (NUL-terminated, out->len excludes the NUL).  0, or -EIO (the server's
 * error: retrying does not help), -EFBIG (the answer was longer than
 * CH_ANSWER_MAX_QUERY, or CH_ANSWER_MAX_INSERT with a body: not retried)
 * or -EAGAIN (the store could not be reached, was overloaded, or took
 * longer than the timeout, after every attempt; a query without a body
 * that was sent and not answered in time is not tried again, and the
 * server stops it then too: max_execution_time); ch_conn__error() then
 * says what happened in one line.
 */
int ch_conn__exec(struct ch_conn *c, const char *sql, const void *body, size_t len,
		  struct pbuf *out);
/* The same with retries off, whatever set_retry said: for a statement that
 * must not run twice (the caller retries it its own way). */
int ch_conn__exec_once(struct ch_conn *c, const char *sql, const void *body, size_t len,
		       struct pbuf *out);
const char *ch_conn__error(const struct ch_conn *c);
/* The URL as messages show it: no password, escaped. */
const char *ch_conn__url(const struct ch_conn *c);

/* The commands' --help about credentials. */
#define CH_CREDENTIALS_HELP \
	"The store's user and password: PRECORD_CH_USER and PRECORD_CH_PASSWORD in\n" \
	"the environment (other users cannot read it; a user:password@ in URL is\n" \
	"shown by ps until precord starts, and never in precord's messages).\n"

/* Append s to b quoted as a ClickHouse string literal ('...' with escapes). */
int ch_quote(struct pbuf *b, const char *s);
/* Append s to b escaped for a TabSeparated field. */
int ch_tsv_escape(struct pbuf *b, const char *s);

#endif
