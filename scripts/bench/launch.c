/*
 * launch [-s] OUT CMD [ARG...]: runs CMD as a child and writes its wait4()
 * figures to OUT, one line: "user_us sys_us maxrss_kb exit_code signal"
 * (exit_code -1 if it died of a signal, signal 0 if it exited).  Exits 0
 * (2 if it cannot write OUT); with -s, with CMD's own exit status instead
 * (1 if CMD died of a signal), so that it can stand in for CMD.
 *
 * Shared by the benchmarks in scripts/bench/ (lib.bash builds it into the
 * bench's temporary directory).  A C program because a process starts
 * with the peak RSS of the one it was forked from (the kernel carries it
 * over exec): spawned straight from a Python driver, every tool would
 * "peak" at Python's size.  SIGINT and SIGTERM are passed on to CMD
 * (unless they are ignored when launch starts: then CMD ignores them too).
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile pid_t child;

static void pass(int sig)
{
	if (child > 0)
		kill(child, sig);
}

/* Pass sig on to the child, unless it is ignored (as it stays then). */
static int pass_on(int sig)
{
	struct sigaction sa;

	if (sigaction(sig, NULL, &sa) == 0 && sa.sa_handler == SIG_IGN)
		return 0;
	signal(sig, pass);
	return 1;
}

int main(int argc, char **argv)
{
	struct rusage ru;
	int st, own_status = 0, pass_int, pass_term;
	FILE *f;

	if (argc > 1 && strcmp(argv[1], "-s") == 0) {
		own_status = 1;
		argc--;
		argv++;
	}
	if (argc < 3)
		return 2;
	pass_int = pass_on(SIGINT);
	pass_term = pass_on(SIGTERM);
	child = fork();
	if (child == 0) {
		if (pass_int)
			signal(SIGINT, SIG_DFL);
		if (pass_term)
			signal(SIGTERM, SIG_DFL);
		execvp(argv[2], argv + 2);
		_exit(127);
	}
	while (wait4(child, &st, 0, &ru) < 0)
		;
	f = fopen(argv[1], "w");
	if (!f)
		return 2;
	fprintf(f, "%ld %ld %ld %d %d\n",
		(long)ru.ru_utime.tv_sec * 1000000 + ru.ru_utime.tv_usec,
		(long)ru.ru_stime.tv_sec * 1000000 + ru.ru_stime.tv_usec, ru.ru_maxrss,
		WIFEXITED(st) ? WEXITSTATUS(st) : -1, WIFSIGNALED(st) ? WTERMSIG(st) : 0);
	fclose(f);
	if (own_status)
		return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
	return 0;
}
