// SPDX-License-Identifier: GPL-2.0
#include "http.h"

#include <curl/curl.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/printable.h"

struct ch_conn {
	CURL *curl;
	char *url;		/* as given, with '?' or '&' ready for query= */
	char shown[160];	/* url for messages: no password, cut */
	char *user, *password;	/* PRECORD_CH_USER, PRECORD_CH_PASSWORD: NULL unset */
	char sep;
	int attempts;
	int first_ms;
	long timeout;
	bool stopped;		/* the last query was sent and not answered in time */
	char err[320];
};

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static CURLcode curl_init_rc;

static void curl_init(void)
{
	curl_init_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
}

/* The user's name in the URL (decoded), NULL for none. */
static char *url_user(const char *url)
{
	CURLU *h = curl_url();
	char *u = NULL, *copy = NULL;

	if (h && !curl_url_set(h, CURLUPART_URL, url, 0) &&
	    !curl_url_get(h, CURLUPART_USER, &u, CURLU_URLDECODE) && u && *u)
		copy = strdup(u);
	curl_free(u);
	curl_url_cleanup(h);
	return copy;
}

/*
 * Credentials from the environment, which only the user running precord
 * (and root) can read, unlike the command line that ps shows everyone.
 * They take precedence over a user:password@ in the URL.  A password
 * without a user goes with the URL's user, else ClickHouse's "default".
 */
static int ch_conn_credentials(struct ch_conn *c)
{
	const char *user = getenv("PRECORD_CH_USER"), *pw = getenv("PRECORD_CH_PASSWORD");

	if (user && *user)
		c->user = strdup(user);
	else if (pw && !(c->user = url_user(c->url)))
		c->user = strdup("default");
	if (pw)
		c->password = strdup(pw);
	if (((user && *user) || pw) && !c->user)
		return -ENOMEM;
	return pw && !c->password ? -ENOMEM : 0;
}

struct ch_conn *ch_conn__new(const char *url)
{
	struct ch_conn *c;

	if (strncmp(url, "http://", 7) && strncmp(url, "https://", 8)) {
		errno = EINVAL;
		return NULL;
	}
	pthread_once(&curl_once, curl_init);
	if (curl_init_rc) {
		errno = ENOMEM;
		return NULL;
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->url = strdup(url);
	c->curl = curl_easy_init();
	if (!c->url || !c->curl || ch_conn_credentials(c)) {
		ch_conn__free(c);
		errno = ENOMEM;
		return NULL;
	}
	printable_url(c->shown, sizeof(c->shown), url);
	c->sep = strchr(url, '?') ? '&' : '?';
	c->attempts = 4;
	c->first_ms = 500;
	c->timeout = 60;
	return c;
}

void ch_conn__free(struct ch_conn *c)
{
	if (!c)
		return;
	if (c->curl)
		curl_easy_cleanup(c->curl);
	if (c->password)
		memset(c->password, 0, strlen(c->password));
	free(c->user);
	free(c->password);
	free(c->url);
	free(c);
}

void ch_conn__set_retry(struct ch_conn *c, int attempts, int first_ms)
{
	c->attempts = attempts < 1 ? 1 : attempts;
	c->first_ms = first_ms;
}

void ch_conn__set_timeout(struct ch_conn *c, long secs)
{
	c->timeout = secs;
}

const char *ch_conn__error(const struct ch_conn *c)
{
	return c->err;
}

const char *ch_conn__url(const struct ch_conn *c)
{
	return c->shown;
}

/* The answer into out, up to max bytes: past it the transfer stops. */
struct answer {
	struct pbuf *out;
	size_t max;
	bool over;
};

static size_t on_data(char *p, size_t size, size_t n, void *arg)
{
	struct answer *a = arg;

	if (n && size > (a->max - a->out->len) / n) {
		a->over = true;
		return 0;	/* CURLE_WRITE_ERROR */
	}
	return pbuf_put(a->out, p, size * n) ? 0 : size * n;
}

/*
 * ClickHouse errors that go away by themselves (its error codes): 159
 * timeout, 202 too many queries, 209/210 socket, 252 too many parts (the
 * merges catch up), 279 no connection to a shard, 285 too few live
 * replicas.
 */
static bool error_is_transient(const char *body)
{
	static const int codes[] = { 159, 202, 209, 210, 252, 279, 285 };
	const char *p = strstr(body, "Code: ");
	int code;

	if (!p || sscanf(p + 6, "%d", &code) != 1)
		return false;
	for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++)
		if (codes[i] == code)
			return true;
	return false;
}

/* The server's message, first line, without the stack trace. */
static void set_server_error(struct ch_conn *c, long status, const struct pbuf *out)
{
	size_t n = out->len;
	const char *s = (const char *)out->data;
	char said[256];

	if (!s)
		s = "", n = 0;
	for (size_t i = 0; i < n; i++)
		if (s[i] == '\n' || (s[i] == ',' && i + 13 < n && !strncmp(s + i, ", Stack trace", 13))) {
			n = i;
			break;
		}
	if (n > 240)
		n = 240;
	snprintf(c->err, sizeof(c->err), "ClickHouse at %s answered HTTP %ld: %s", c->shown,
		 status, printable_mem(said, sizeof(said), s, n));
}

static int exec_one(struct ch_conn *c, const char *sql, const void *body, size_t len,
		    struct pbuf *out)
{
	char *q = curl_easy_escape(c->curl, sql, 0), limit[48] = "";
	struct answer a = { out, body ? CH_ANSWER_MAX_INSERT : CH_ANSWER_MAX_QUERY, false };
	char *url = NULL;
	long status = 0, sent = 0;	/* sent: the request's bytes */
	CURLcode rc;

	/* insert_distributed_sync: an INSERT into a Distributed table returns
	 * once every shard has its rows.  Without it the receiving server
	 * queues them and sends them later: a query right after a push missed
	 * the other shard's rows, and a file would be committed with its rows
	 * still in a queue on one server's disk. */
	/*
	 * max_execution_time: a query (no body) the client stops waiting for
	 * is stopped by the server too, at the same time.  ClickHouse 18.16
	 * goes on running a query whose HTTP client went away: a fleet-wide
	 * question from the raw rows, timed out and retried, ran three times
	 * at once on each shard (and more with each new question).
	 */
	c->stopped = false;
	if (!body)
		snprintf(limit, sizeof(limit), "&max_execution_time=%ld", c->timeout);
	if (!q || asprintf(&url, "%s%cinsert_distributed_sync=1%s&query=%s", c->url, c->sep, limit,
			   q) < 0) {
		curl_free(q);
		snprintf(c->err, sizeof(c->err), "out of memory");
		return -ENOMEM;
	}
	curl_free(q);
	pbuf_reset(out);
	curl_easy_reset(c->curl);
	curl_easy_setopt(c->curl, CURLOPT_URL, url);
	curl_easy_setopt(c->curl, CURLOPT_POST, 1L);
	curl_easy_setopt(c->curl, CURLOPT_POSTFIELDS, body ? (const char *)body : "");
	curl_easy_setopt(c->curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)(body ? len : 0));
	curl_easy_setopt(c->curl, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(c->curl, CURLOPT_WRITEDATA, &a);
	curl_easy_setopt(c->curl, CURLOPT_NOSIGNAL, 1L);
	if (c->user)
		curl_easy_setopt(c->curl, CURLOPT_USERNAME, c->user);
	if (c->password)
		curl_easy_setopt(c->curl, CURLOPT_PASSWORD, c->password);
	curl_easy_setopt(c->curl, CURLOPT_CONNECTTIMEOUT, c->timeout < 5 ? c->timeout : 5L);
	curl_easy_setopt(c->curl, CURLOPT_TIMEOUT, c->timeout);
	rc = curl_easy_perform(c->curl);
	free(url);
	if (a.over) {
		/* not retried: the same statement gets the same answer */
		pbuf_reset(out);
		if (!pbuf_put_u8(out, 0))
			out->len--;
		snprintf(c->err, sizeof(c->err), "ClickHouse at %s answered more than %zu MiB to one %s; stopped reading it (narrow the query)",
			 c->shown, a.max >> 20, body ? "insert" : "query");
		return -EFBIG;
	}
	if (pbuf_put_u8(out, 0)) {
		snprintf(c->err, sizeof(c->err), "out of memory reading ClickHouse's answer");
		return -ENOMEM;
	}
	out->len--;
	if (rc == CURLE_OPERATION_TIMEDOUT && !body &&
	    curl_easy_getinfo(c->curl, CURLINFO_REQUEST_SIZE, &sent) == CURLE_OK && sent > 0) {
		/* sent, not answered: the server stopped it too; not retried */
		c->stopped = true;
		snprintf(c->err, sizeof(c->err), "ClickHouse at %s did not answer in %ld s; it stops the query too (max_execution_time): narrow it (--host, --since)",
			 c->shown, c->timeout);
		return -EAGAIN;
	}
	if (rc != CURLE_OK) {
		snprintf(c->err, sizeof(c->err), "cannot reach ClickHouse at %s: %s (is clickhouse-server running, and is that its http_port?)",
			 c->shown, curl_easy_strerror(rc));
		return -EAGAIN;
	}
	curl_easy_getinfo(c->curl, CURLINFO_RESPONSE_CODE, &status);
	if (status == 200)
		return 0;
	set_server_error(c, status, out);
	return status == 503 || error_is_transient((const char *)out->data) ? -EAGAIN : -EIO;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static int exec_retry(struct ch_conn *c, int attempts, const char *sql, const void *body,
		      size_t len, struct pbuf *out)
{
	long wait = c->first_ms;
	int err = 0;

	for (int i = 0; i < attempts; i++) {
		if (i) {
			sleep_ms(wait);
			wait *= 2;
		}
		err = exec_one(c, sql, body, len, out);
		if (err != -EAGAIN || c->stopped)
			break;
	}
	return err;
}

int ch_conn__exec(struct ch_conn *c, const char *sql, const void *body, size_t len,
		  struct pbuf *out)
{
	return exec_retry(c, c->attempts, sql, body, len, out);
}

int ch_conn__exec_once(struct ch_conn *c, const char *sql, const void *body, size_t len,
		       struct pbuf *out)
{
	return exec_retry(c, 1, sql, body, len, out);
}

int ch_quote(struct pbuf *b, const char *s)
{
	pbuf_put_u8(b, '\'');
	for (; *s; s++) {
		if (*s == '\'' || *s == '\\')
			pbuf_put_u8(b, '\\');
		pbuf_put_u8(b, (uint8_t)*s);
	}
	return pbuf_put_u8(b, '\'');
}

int ch_tsv_escape(struct pbuf *b, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '\t': pbuf_put(b, "\\t", 2); break;
		case '\n': pbuf_put(b, "\\n", 2); break;
		case '\\': pbuf_put(b, "\\\\", 2); break;
		case '\'': pbuf_put(b, "\\'", 2); break;
		default: pbuf_put_u8(b, (uint8_t)*s);
		}
	}
	return b->err;
}
