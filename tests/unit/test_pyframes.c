// SPDX-License-Identifier: GPL-2.0
/* record/pyframes.c: the splice of Python frames into a user chain, and
 * the code-object name reader on fake (and hostile) process memory. */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "harness.h"
#include "record/pyframes.h"

/* ---- splice ---- */

#define EVAL_LO	0x1000
#define EVAL_HI	0x2000

/* a Python frame word's address: 0xc0de0000 + its code */
static __u64 addr_of(void *ctx, __u64 word)
{
	(*(int *)ctx)++;
	return 0xc0de0000 + (word & ~PREC_PY_ENTRY);
}

TEST(activations_replaced_up_to_their_entry_frames)
{
	/* leaf C, eval (f, entry), C sort, eval (g, h entry), main */
	__u64 user[] = { 0x500, 0x1100, 0x600, 0x1200, 0x700 };
	__u64 py[] = { 0x10 | PREC_PY_ENTRY, 0x20, 0x30 | PREC_PY_ENTRY };
	__u64 out[16];
	int calls = 0;
	__u32 n = py_splice(&(struct py_chain){ user, 5, py, 3, false }, EVAL_LO, EVAL_HI, addr_of,
			    &calls, out, 16);

	CHECK_EQ(n, 6);
	CHECK_EQ(out[0], 0x500);
	CHECK_EQ(out[1], 0xc0de0010);
	CHECK_EQ(out[2], 0x600);
	CHECK_EQ(out[3], 0xc0de0020);
	CHECK_EQ(out[4], 0xc0de0030);
	CHECK_EQ(out[5], 0x700);
	CHECK_EQ(calls, 3);

	/* sampled in the loop itself: the ip stays, the frames below it */
	n = py_splice(&(struct py_chain){ user + 1, 4, py, 3, true }, EVAL_LO, EVAL_HI, addr_of,
		      &calls, out, 16);
	CHECK_EQ(n, 6);
	CHECK_EQ(out[0], 0x1100);
	CHECK_EQ(out[1], 0xc0de0010);
	CHECK_EQ(out[2], 0x600);
	CHECK_EQ(out[3], 0xc0de0020);
	CHECK_EQ(out[5], 0x700);
}

TEST(leftovers_after_a_short_chain_and_extra_activations_kept)
{
	/* -g through code without frame pointers: one eval, zeros after */
	__u64 user[] = { 0x1100, 0x900, 0, 0 };
	__u64 py[] = { 0x10, 0x20 | PREC_PY_ENTRY, 0x30, 0x40 | PREC_PY_ENTRY };
	__u64 out[16];
	int calls = 0;
	__u32 n = py_splice(&(struct py_chain){ user, 4, py, 4, false }, EVAL_LO, EVAL_HI, addr_of,
			    &calls, out, 16);

	CHECK_EQ(n, 5);
	CHECK_EQ(out[0], 0xc0de0010);
	CHECK_EQ(out[1], 0xc0de0020);
	CHECK_EQ(out[2], 0x900);
	CHECK_EQ(out[3], 0xc0de0030);	/* zeros dropped, leftovers appended */
	CHECK_EQ(out[4], 0xc0de0040);

	/* more activations than Python frames: the rest stay native */
	__u64 user2[] = { 0x1100, 0x1200, 0x1300 };
	__u64 py2[] = { 0x10 };

	n = py_splice(&(struct py_chain){ user2, 3, py2, 1, false }, EVAL_LO, EVAL_HI, addr_of,
		      &calls, out, 16);
	CHECK_EQ(n, 3);
	CHECK_EQ(out[0], 0xc0de0010);
	CHECK_EQ(out[1], 0x1200);
	CHECK_EQ(out[2], 0x1300);
}

TEST(splice_stays_within_cap)
{
	__u64 user[PREC_MAX_STACK], py[PREC_PY_MAX_FRAMES], out[8];
	int calls = 0;

	for (int i = 0; i < PREC_MAX_STACK; i++)
		user[i] = 0x1100 + i;		/* every frame an activation */
	for (int i = 0; i < PREC_PY_MAX_FRAMES; i++)
		py[i] = 0x100 + 16 * i;		/* no entry frame at all */
	CHECK_EQ(py_splice(&(struct py_chain){ user, PREC_MAX_STACK, py, PREC_PY_MAX_FRAMES, true },
			   EVAL_LO, EVAL_HI, addr_of, &calls, out, 8), 8);
	CHECK_EQ(out[0], 0x1100);
	CHECK_EQ(out[7], 0xc0de0000 + 0x100 + 16 * 6);
	CHECK_EQ(py_splice(&(struct py_chain){ user, 0, py, 0, false }, EVAL_LO, EVAL_HI, addr_of,
			   &calls, out, 8), 0);
}

/* ---- code objects on fake memory ---- */

static __u8 mem[1 << 16];
#define BASE	0x7f0000000000ULL
#define CODE_T	(BASE + 0x100)
#define STR_T	(BASE + 0x200)

static int fake_read(void *ctx, __u64 addr, void *buf, size_t len)
{
	(void)ctx;
	if (addr < BASE || addr - BASE > sizeof(mem) || len > sizeof(mem) - (addr - BASE))
		return -EFAULT;
	memcpy(buf, mem + (addr - BASE), len);
	return 0;
}

static void put64(__u64 at, __u64 v)
{
	memcpy(mem + (at - BASE), &v, 8);
}

static void put32(__u64 at, __u32 v)
{
	memcpy(mem + (at - BASE), &v, 4);
}

static void ascii(const struct py_layout *l, __u64 at, const char *text)
{
	put64(at + l->ob_type, STR_T);
	put64(at + l->str_length, strlen(text));
	put32(at + l->str_state, 0x20 | 0x40 | 1 << 2);
	memcpy(mem + (at - BASE) + l->ascii_data, text, strlen(text));
}

static void code(const struct py_layout *l, __u64 at, __u64 qual, __u64 file, int line)
{
	put64(at + l->ob_type, CODE_T);
	put64(at + l->co_qualname, qual);
	put64(at + l->co_filename, file);
	put32(at + l->co_firstlineno, (__u32)line);
}

TEST(names_of_good_and_hostile_code_objects)
{
	const struct py_layout *l = py_layout_find(0x030b02f0);
	struct py_types t = { .code = CODE_T, .unicode = STR_T };
	struct py_code_id id;
	char out[PY_MAX_SYMBOL];
	__u32 ucs4[] = { 'f', 0x1b, 0xd800, 0x110000, 0x263a };

	CHECK(l != NULL);
	if (!l)
		return;
	CHECK(py_layout_find(0x030a00f0) == NULL);	/* 3.10: not supported */
	CHECK(py_layout_find(0x030c01f0) != NULL && py_layout_find(0x030d00f0) != NULL);
	CHECK(py_layout_find(0x030e00f0) == NULL);	/* 3.14: not yet */
	memset(mem, 0, sizeof(mem));
	ascii(l, BASE + 0x1000, "Outer.ho_main");
	ascii(l, BASE + 0x1100, "/srv/app/main.py");
	code(l, BASE + 0x2000, BASE + 0x1000, BASE + 0x1100, 12);
	CHECK_EQ(py_code_symbol(l, &t, fake_read, NULL, BASE + 0x2000, &id, out, sizeof(out)), 0);
	CHECK_STR(out, "Outer.ho_main (main.py:12)");
	CHECK_EQ(id.qualname, BASE + 0x1000);
	CHECK_EQ(id.firstlineno, 12);

	/* not a code object; unreadable; NULL */
	put64(BASE + 0x2100 + l->ob_type, STR_T);
	CHECK_EQ(py_code_symbol(l, &t, fake_read, NULL, BASE + 0x2100, &id, out, sizeof(out)),
		 -EINVAL);
	CHECK_EQ(py_code_symbol(l, &t, fake_read, NULL, 0x1000, &id, out, sizeof(out)), -EFAULT);
	CHECK_EQ(py_code_symbol(l, &t, fake_read, NULL, 0, &id, out, sizeof(out)), -EFAULT);

	/* a qualname claiming 2^62 characters: cut at PY_MAX_QUALNAME */
	put64(BASE + 0x3000 + l->ob_type, STR_T);
	put64(BASE + 0x3000 + l->str_length, 1ULL << 62);
	put32(BASE + 0x3000 + l->str_state, 0x20 | 0x40 | 1 << 2);
	memset(mem + 0x3000 + l->ascii_data, 'x', 4096);
	code(l, BASE + 0x2200, BASE + 0x3000, BASE + 0x1100, 0);
	CHECK_EQ(py_code_symbol(l, &t, fake_read, NULL, BASE + 0x2200, &id, out, sizeof(out)), 0);
	CHECK_EQ(strlen(out), PY_MAX_QUALNAME + strlen(" (main.py)"));

	/* the same running off the readable memory: an error, not a crash */
	put64(BASE + 0xff00 + l->ob_type, STR_T);
	put64(BASE + 0xff00 + l->str_length, 1ULL << 62);
	put32(BASE + 0xff00 + l->str_state, 0x20 | 0x40 | 1 << 2);
	code(l, BASE + 0x2300, BASE + 0xff00, BASE + 0x1100, 3);
	CHECK_EQ(py_code_symbol(l, &t, fake_read, NULL, BASE + 0x2300, &id, out, sizeof(out)),
		 -EFAULT);

	/* UCS-4 with control, surrogate and out-of-range code points */
	put64(BASE + 0x4000 + l->ob_type, STR_T);
	put64(BASE + 0x4000 + l->str_length, 5);
	put32(BASE + 0x4000 + l->str_state, 0x20 | 4 << 2);
	memcpy(mem + 0x4000 + l->compact_data, ucs4, sizeof(ucs4));
	code(l, BASE + 0x2400, BASE + 0x4000, BASE + 0x1100, 5);
	CHECK_EQ(py_code_symbol(l, &t, fake_read, NULL, BASE + 0x2400, &id, out, sizeof(out)), 0);
	CHECK(!strcmp(out, "f???\xe2\x98\xba (main.py:5)"));

	/* not compact, a kind that does not exist, a string that is no str */
	put64(BASE + 0x5000 + l->ob_type, STR_T);
	put64(BASE + 0x5000 + l->str_length, 3);
	put32(BASE + 0x5000 + l->str_state, 1 << 2);
	code(l, BASE + 0x2500, BASE + 0x5000, BASE + 0x1100, 5);
	CHECK_EQ(py_code_symbol(l, &t, fake_read, NULL, BASE + 0x2500, &id, out, sizeof(out)),
		 -EINVAL);
	put32(BASE + 0x5000 + l->str_state, 0x20 | 3 << 2);
	CHECK_EQ(py_code_symbol(l, &t, fake_read, NULL, BASE + 0x2500, &id, out, sizeof(out)),
		 -EINVAL);
	code(l, BASE + 0x2600, BASE + 0x2000, BASE + 0x1100, 5);	/* a code object */
	CHECK_EQ(py_code_symbol(l, &t, fake_read, NULL, BASE + 0x2600, &id, out, sizeof(out)),
		 -EINVAL);

	/* identity: another code object at the same address differs */
	CHECK_EQ(py_code_identity(l, &t, fake_read, NULL, BASE + 0x2000, &id), 0);
	code(l, BASE + 0x2000, BASE + 0x1000, BASE + 0x1100, 13);
	{
		struct py_code_id id2;

		CHECK_EQ(py_code_identity(l, &t, fake_read, NULL, BASE + 0x2000, &id2), 0);
		CHECK(id2.firstlineno != id.firstlineno);
	}
}

int main(void)
{
	RUN(activations_replaced_up_to_their_entry_frames);
	RUN(leftovers_after_a_short_chain_and_extra_activations_kept);
	RUN(splice_stays_within_cap);
	RUN(names_of_good_and_hostile_code_objects);
	return HARNESS_DONE();
}
