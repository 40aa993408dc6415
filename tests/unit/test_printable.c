// SPDX-License-Identifier: GPL-2.0
/* util/printable: what a target-chosen name may put on the terminal. */
#include <string.h>

#include "harness.h"
#include "util/printable.h"

static const char *esc(const char *s)
{
	static char out[256];

	return printable(out, sizeof(out), s);
}

TEST(plain_and_utf8_kept)
{
	CHECK_STR(esc("/tmp/jit-42.dump"), "/tmp/jit-42.dump");
	CHECK_STR(esc("Hot:Work (int) \xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80"),
		  "Hot:Work (int) \xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80");
	CHECK_STR(esc(""), "");
	CHECK_STR(esc(NULL), "(null)");
}

TEST(controls_escaped)
{
	/* a newline, then a forged precord line, an ESC sequence, a BEL */
	CHECK_STR(esc("a\n[ precord: fake ]"), "a\\x0a[ precord: fake ]");
	CHECK_STR(esc("\x1b[2J\x07"), "\\x1b[2J\\x07");
	CHECK_STR(esc("tab\there\r\x7f"), "tab\\x09here\\x0d\\x7f");
	CHECK_STR(esc("back\\slash"), "back\\x5cslash");
}

TEST(bad_utf8_escaped)
{
	CHECK_STR(esc("\xff\xfe"), "\\xff\\xfe");
	CHECK_STR(esc("\xc0\xaf"), "\\xc0\\xaf");		/* overlong '/' */
	CHECK_STR(esc("\xed\xa0\x80"), "\\xed\\xa0\\x80");	/* surrogate */
	CHECK_STR(esc("\xc2\x9b" "31m"), "\\xc2\\x9b31m");	/* C1 CSI */
	CHECK_STR(esc("\xe2\x82"), "\\xe2\\x82");		/* cut sequence */
	CHECK_STR(esc("\xf4\x90\x80\x80"), "\\xf4\\x90\\x80\\x80"); /* > U+10FFFF */
}

TEST(cut_to_fit)
{
	char out[12];

	CHECK_STR(printable(out, sizeof(out), "abcdefghijklmnop"), "abcdefgh...");
	CHECK_STR(printable(out, sizeof(out), "\n\n\n\n"), "\\x0a\\x0a...");
	CHECK_STR(printable(out, sizeof(out), "short"), "short");
	CHECK_STR(printable_mem(out, sizeof(out), "a\0b", 3), "a\\x00b");
	CHECK_STR(printable(out, 3, "abc"), "");
}

int main(void)
{
	RUN(plain_and_utf8_kept);
	RUN(controls_escaped);
	RUN(bad_utf8_escaped);
	RUN(cut_to_fit);
	return HARNESS_DONE();
}
