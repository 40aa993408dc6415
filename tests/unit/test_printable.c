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

/* f's output for each form, as one string. */
static char streamed[512];

static const char *stream(int (*put)(FILE *, const char *, const char *), const char *s,
			  const char *also)
{
	FILE *f = fmemopen(streamed, sizeof(streamed), "w");

	CHECK(f != NULL);
	if (!f)
		return "";
	CHECK_EQ(put(f, s, also), 0);
	fclose(f);
	return streamed;
}

static int put_xml(FILE *f, const char *s, const char *also)
{
	(void)also;
	return xml_fputs(f, s);
}

/* The hostile names of issue 18, finding 12: every form keeps valid UTF-8
 * and escapes the rest the same way. */
static const char hostile[] = "a\nb\tc\x1b[31m\x07\xff\xc0\xaf\xef\xbf\xbe<&\"'>;\xc3\xa9";

TEST(folded_form)
{
	CHECK_STR(stream(printable_fputs, hostile, ";"),
		  "a\\x0ab\\x09c\\x1b[31m\\x07\\xff\\xc0\\xaf\\xef\\xbf\\xbe<&\"'>\\x3b\xc3\xa9");
	CHECK_STR(stream(printable_fputs, "ns::f(int, char)", ";"), "ns::f(int, char)");
	CHECK_STR(stream(printable_fputs, hostile, NULL),
		  "a\\x0ab\\x09c\\x1b[31m\\x07\\xff\\xc0\\xaf\\xef\\xbf\\xbe<&\"'>;\xc3\xa9");
	/* a long name is not cut */
	char lng[300];

	memset(lng, 'x', sizeof(lng) - 1);
	lng[sizeof(lng) - 1] = 0;
	CHECK_EQ(strlen(stream(printable_fputs, lng, NULL)), 299);
}

TEST(xml_form)
{
	CHECK_STR(stream(put_xml, hostile, NULL),
		  "a\\x0ab\\x09c\\x1b[31m\\x07\\xff\\xc0\\xaf\\xef\\xbf\\xbe&lt;&amp;&quot;&apos;&gt;;\xc3\xa9");
	CHECK_STR(stream(put_xml, "work<int>", NULL), "work&lt;int&gt;");
	CHECK_STR(stream(put_xml, "\xf0\x9f\x98\x80\xed\xa0\x80", NULL), "\xf0\x9f\x98\x80\\xed\\xa0\\x80");
}

static const char *redact(const char *url)
{
	static char out[256];

	return url_redact(out, sizeof(out), url);
}

TEST(url_password_never_shown)
{
	char out[64], arg[128];

	CHECK_STR(redact("http://ch1:8123/"), "http://ch1:8123/");
	CHECK_STR(redact("http://alice:s3cret@ch1:8123/"), "http://alice:***@ch1:8123/");
	CHECK_STR(redact("https://alice@ch1/"), "https://alice@ch1/");
	CHECK_STR(redact("http://a:p@ss:w@rd@ch1:8123/x?y=1"), "http://a:***@ch1:8123/x?y=1");
	CHECK_STR(redact("http://ch1:8123/?user=a&password=s3cret&db=x"),
		  "http://ch1:8123/?user=a&password=***&db=x");
	CHECK_STR(redact("http://ch1/?password=s3cret#password=x"), "http://ch1/?password=***#password=x");
	/* no scheme (a bad URL, said in an error): still hidden */
	CHECK_STR(redact("alice:s3cret@ch1:8123"), "alice:***@ch1:8123");
	CHECK_STR(redact("ch1:8123/?x=http://a:b@c"), "ch1:8123/?x=http://a:b@c");
	CHECK_STR(redact("--push=http://alice:s3cret@ch1/"), "--push=http://alice:***@ch1/");
	/* shown: redacted, escaped, cut, and never a byte of the password */
	CHECK_STR(printable_url(out, sizeof(out), "http://a:s3cret@ch1\n:8123/"),
		  "http://a:***@ch1\\x0a:8123/");
	CHECK_STR(printable_url(out, 16, "http://alice:s3cret@ch1/"), "http://alice...");
	CHECK_STR(url_redact(out, 16, "http://alice:s3cret@ch1/"), "http://alice:**");
	/* in place, for argv: the same length */
	strcpy(arg, "http://alice:s3cret@ch1:8123/?password=xy");
	url_hide_password(arg);
	CHECK_STR(arg, "http://alice:******@ch1:8123/?password=**");
}

int main(void)
{
	RUN(plain_and_utf8_kept);
	RUN(controls_escaped);
	RUN(bad_utf8_escaped);
	RUN(cut_to_fit);
	RUN(folded_form);
	RUN(xml_form);
	RUN(url_password_never_shown);
	return HARNESS_DONE();
}
