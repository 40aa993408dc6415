// SPDX-License-Identifier: GPL-2.0
/* The fleet store's pure parts: the stable hash, ClickHouse quoting and
 * TabSeparated parsing, and the flame graph's SVG. */
#include "harness.h"


#include "fleet/flamegraph.h"
#include "fleet/hash.h"
#include "fleet/http.h"
#include "fleet/tsv.h"

/* The hash is part of the store's format: stacks pushed by an older
 * precord must keep their hashes.  These values are the format. */
TEST(hash_is_stable)
{
	CHECK(fleet_hash64("", 0, 0) == fleet_hash64("", 0, 0));
	CHECK(fleet_hash64("hot_a", 5, 1) != fleet_hash64("hot_a", 5, 2));
	CHECK(fleet_hash64("ab", 2, 0) != fleet_hash64("ba", 2, 0));
	CHECK(fleet_hash64("abcdefgh", 8, 0) != fleet_hash64("abcdefgi", 8, 0));
	CHECK(fleet_hash64("abcdefghi", 9, 0) != fleet_hash64("abcdefgh", 8, 0));
	/* the tail: bytes after the last 8-byte word count */
	CHECK(fleet_hash64("abcdefghij", 10, 0) != fleet_hash64("abcdefghik", 10, 0));
	CHECK_EQ(fleet_hash64("precord", 7, 0), 0x2809f6def5d6fed7ULL);
}

TEST(quote_and_escape)
{
	struct pbuf b = { 0 };

	ch_quote(&b, "it's a\\b");
	pbuf_put_u8(&b, 0);
	CHECK_STR((char *)b.data, "'it\\'s a\\\\b'");
	pbuf_reset(&b);
	ch_tsv_escape(&b, "a\tb\nc\\d'e");
	pbuf_put_u8(&b, 0);
	CHECK_STR((char *)b.data, "a\\tb\\nc\\\\d\\'e");
	pbuf_free(&b);
}

TEST(tsv_fields_and_arrays)
{
	char line[] = "1\tweb\\t7\t['a','b\\'c','d\\\\e']";
	char *f[4], **arr;
	int n;

	CHECK_EQ(tsv_split(line, f, 4), 3);
	tsv_unescape(f[1]);
	CHECK_STR(f[1], "web\t7");
	CHECK_EQ(tsv_parse_array(f[2], &arr, &n), 0);
	CHECK_EQ(n, 3);
	if (n == 3) {
		CHECK_STR(arr[0], "a");
		CHECK_STR(arr[1], "b'c");
		CHECK_STR(arr[2], "d\\e");
	}
	for (int i = 0; i < n; i++)
		free(arr[i]);
	free(arr);
	/* malformed: what came before the fault, nothing past it */
	CHECK_EQ(tsv_parse_array("['x','unterminated", &arr, &n), 0);
	CHECK_EQ(n, 1);
	for (int i = 0; i < n; i++)
		free(arr[i]);
	free(arr);
	CHECK_EQ(tsv_parse_array("not an array", &arr, &n), 0);
	CHECK_EQ(n, 0);
	free(arr);
}

TEST(flamegraph_svg)
{
	struct flame *f = flame__new();
	const char *a[] = { "main", "work<int>", "leaf&co" };
	const char *b[] = { "main", "other" };
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);

	CHECK(f && out);
	CHECK_EQ(flame__add(f, a, 3, 30), 0);
	CHECK_EQ(flame__add(f, b, 2, 10), 0);
	CHECK_EQ(flame__write_svg(f, out, "t <1>"), 0);
	fclose(out);
	CHECK(strstr(text, "<title>work&lt;int&gt; (30 samples, 75.00%)</title>"));
	CHECK(strstr(text, "<title>leaf&amp;co (30 samples, 75.00%)</title>"));
	CHECK(strstr(text, "<title>other (10 samples, 25.00%)</title>"));
	CHECK(strstr(text, "<title>all (40 samples, 100.00%)</title>"));
	CHECK(strstr(text, "t &lt;1&gt;"));
	CHECK(!strstr(text, "href"));
	CHECK(strstr(text, "</svg>\n"));
	free(text);
	flame__free(f);
}

/* Issue 18, finding 12: names a process or a store chose (invalid UTF-8,
 * overlong forms, controls, XML's specials) leave the SVG well-formed. */
TEST(flamegraph_hostile_names)
{
	struct flame *f = flame__new();
	const char *a[] = { "main", "bad\xff\xfe", "over\xc0\xaf", "nl\nforged 999",
			    "esc\x1b[31m\x07", "nc\xef\xbf\xbf<&\"'>" };
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);

	CHECK(f && out);
	CHECK_EQ(flame__add(f, a, 6, 5), 0);
	CHECK_EQ(flame__write_svg(f, out, "host \x01\xfe"), 0);
	fclose(out);
	CHECK(strstr(text, "<title>bad\\xff\\xfe (5 samples"));
	CHECK(strstr(text, "<title>over\\xc0\\xaf (5 samples"));
	CHECK(strstr(text, "<title>nl\\x0aforged 999 (5 samples"));
	CHECK(strstr(text, "<title>esc\\x1b[31m\\x07 (5 samples"));
	CHECK(strstr(text, "<title>nc\\xef\\xbf\\xbf&lt;&amp;&quot;&apos;&gt; (5 samples"));
	CHECK(strstr(text, "host \\x01\\xfe</text>"));
	/* no byte XML 1.0 refuses: controls but \n, and any byte >= 0x80
	 * (every name here is ASCII once escaped) */
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)text[i] >= 0x80 || ((unsigned char)text[i] < 0x20 && text[i] != '\n')) {
			CHECK(!"a byte XML refuses");
			break;
		}
	free(text);
	flame__free(f);
}

int main(void)
{
	RUN(hash_is_stable);
	RUN(quote_and_escape);
	RUN(tsv_fields_and_arrays);
	RUN(flamegraph_svg);
	RUN(flamegraph_hostile_names);
	return HARNESS_DONE();
}
