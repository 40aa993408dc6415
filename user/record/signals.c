// SPDX-License-Identifier: GPL-2.0
#include "record/signals.h"

#include <signal.h>
#include <stddef.h>

static volatile sig_atomic_t stop_signal, stop_requests;
static volatile sig_atomic_t child_exited, switch_requested;

static void on_signal(int sig)
{
	stop_signal = sig;
	stop_requests++;
}

static void on_switch_signal(int sig)
{
	(void)sig;
	switch_requested = 1;
}

static void on_sigchld(int sig)
{
	(void)sig;
	child_exited = 1;
}

void record_signals_catch_child(void)
{
	sigaction(SIGCHLD, &(struct sigaction){ .sa_handler = on_sigchld }, NULL);
}

void record_signals_catch_stop(bool rotating)
{
	struct sigaction sa = { .sa_handler = on_signal };

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, rotating ? &(struct sigaction){ .sa_handler = on_switch_signal } : &sa,
		  NULL);
	if (rotating)
		sigaction(SIGUSR2, &(struct sigaction){ .sa_handler = on_switch_signal }, NULL);
}

int record_signals_stop(void)
{
	return stop_signal;
}

unsigned int record_signals_stop_requests(void)
{
	return (unsigned int)stop_requests;
}

bool record_signals_child_exited(void)
{
	return child_exited;
}

bool record_signals_switch_asked(void)
{
	return switch_requested;
}

void record_signals_switch_taken(void)
{
	switch_requested = 0;
}
