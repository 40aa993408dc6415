// SPDX-License-Identifier: GPL-2.0
#include "flamegraph.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "util/buf.h"
#include "util/keymap.h"
#include "util/numtext.h"
#include "util/printable.h"

struct fnode {
	const char *name;		/* in the node's own block; NULL: the root */
	uint64_t value;
	uint64_t base;			/* differential: the baseline's value */
	struct fnode *child, *next;	/* first child, next sibling */
};

/*
 * Every node is also in an index by (parent, name), so adding a frame
 * costs the same whatever the number of its siblings: a store holding
 * 100,000 stacks of distinct leaves under one caller (any writer can make
 * them) took 80 s of name comparisons when children were scanned.
 */
struct flame {
	struct fnode root;
	int max_depth;
	struct keymap index;		/* parent pointer + name -> node */
	size_t nodes;			/* but the root */
	struct pbuf key;		/* scratch */
	const char *unit;		/* of the values: "samples" unless set */
	bool diff;			/* differential (flame__set_diff) */
	const char *baseline;		/* its second line: what A is */
};

#define FG_WIDTH	1200.0
#define FG_FRAME_H	16
#define FG_PAD_TOP	48
#define FG_PAD_BOTTOM	24
#define FG_PAD_SIDE	10.0
/* Narrower frames are left out (their samples stay in the parent's width):
 * a graph of 100 000 stacks stays a few MB that a browser opens at once. */
#define FG_MIN_PX	0.3
/* Differential: two more lines under the title (the baseline, the legend),
 * full colour at the largest change but never under 5 points (a change
 * as small as sampling noise stays pale), neutral grey for none. */
#define FG_DIFF_PAD	36
#define FG_DIFF_FULL	0.05
#define FG_NEUTRAL	236
#define FG_DEEP		40

struct flame *flame__new(void)
{
	struct flame *f = calloc(1, sizeof(*f));

	if (f)
		f->unit = "samples";
	return f;
}

void flame__set_unit(struct flame *f, const char *unit)
{
	f->unit = unit;
}

void flame__set_diff(struct flame *f, const char *baseline)
{
	f->diff = true;
	f->baseline = baseline;
}

static void free_node(struct fnode *n)
{
	while (n) {
		struct fnode *next = n->next;

		free_node(n->child);
		free(n);
		n = next;
	}
}

void flame__free(struct flame *f)
{
	if (!f)
		return;
	free_node(f->root.child);
	keymap_free(&f->index);
	pbuf_free(&f->key);
	free(f);
}

static struct fnode *child_of(struct flame *f, struct fnode *p, const char *name)
{
	struct fnode *c;
	uint64_t *v;
	bool added;

	pbuf_reset(&f->key);
	pbuf_put(&f->key, &p, sizeof(p));
	pbuf_put(&f->key, name, strlen(name));
	v = f->key.err ? NULL : keymap_put(&f->index, f->key.data, f->key.len, &added);
	if (!v)
		return NULL;
	if (!added)
		return (struct fnode *)(uintptr_t)*v;
	/* the node and its name in one block */
	c = calloc(1, sizeof(*c) + strlen(name) + 1);
	if (!c)
		return NULL;	/* the index keeps 0 for it: -ENOMEM again if asked */
	c->name = strcpy((char *)(c + 1), name);
	c->next = p->child;
	p->child = c;
	f->nodes++;
	*v = (uint64_t)(uintptr_t)c;
	return c;
}

/* The path of frames from the root, value added to each node's value
 * (or base: the baseline's). */
static int add_path(struct flame *f, const char *const *frames, int nr, uint64_t value, bool base)
{
	struct fnode *n = &f->root;

	*(base ? &n->base : &n->value) += value;
	for (int i = 0; i < nr; i++) {
		n = child_of(f, n, frames[i] && *frames[i] ? frames[i] : "[unknown]");
		if (!n)
			return -ENOMEM;
		*(base ? &n->base : &n->value) += value;
	}
	return 0;
}

int flame__add(struct flame *f, const char *const *frames, int nr, uint64_t value)
{
	int err = add_path(f, frames, nr, value, false);

	if (!err && nr > f->max_depth)
		f->max_depth = nr;
	return err;
}

/* A frame of the baseline only has no width: the depth is B's. */
int flame__add_base(struct flame *f, const char *const *frames, int nr, uint64_t value)
{
	return add_path(f, frames, nr, value, true);
}

/* A warm colour from the name, the same name the same colour. */
static void colour(const char *s, int *r, int *g, int *b)
{
	uint32_t h = 2166136261u;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	*r = 205 + (int)(h % 50);
	*g = 80 + (int)((h >> 8) % 150);
	*b = 30 + (int)((h >> 16) % 50);
}

/* Differential: a node's share of its side's total, B's and A's, and the
 * change, as fractions. */
static double share_of(uint64_t v, uint64_t total)
{
	return total ? (double)v / (double)total : 0.0;
}

static double change_of(const struct flame *f, const struct fnode *n)
{
	return share_of(n->value, f->root.value) - share_of(n->base, f->root.base);
}

/*
 * Over the frames drawn: the largest |change| (*max); and the baseline's
 * value of frames A has and B not (*vanished: each counted at its topmost
 * such frame), which the graph cannot draw.
 */
static void diff_scan(const struct flame *f, const struct fnode *n, double scale, double *max,
		      uint64_t *vanished)
{
	double c = change_of(f, n);

	if (c < 0)
		c = -c;
	if (c > *max)
		*max = c;
	for (const struct fnode *k = n->child; k; k = k->next) {
		if (!k->value)
			*vanished += k->base;
		else if ((double)k->value * scale >= FG_MIN_PX)
			diff_scan(f, k, scale, max, vanished);
	}
}

/* From neutral grey to red (grown, t > 0) or blue (shrunk, t < 0); the
 * text white on deep blue. */
static void diff_colour(double t, int *r, int *g, int *b, bool *light_text)
{
	double a = t < 0 ? -t : t;
	int up, down;

	if (a > 1)
		a = 1;
	up = FG_NEUTRAL + (int)((255 - FG_NEUTRAL) * a + 0.5);
	down = FG_NEUTRAL - (int)((FG_NEUTRAL - FG_DEEP) * a + 0.5);
	*r = t > 0 ? up : down;
	*g = down;
	*b = t < 0 ? up : down;
	*light_text = t < 0 && a > 0.55;
}

static int compare_names(const void *a, const void *b)
{
	const struct fnode *x = *(const struct fnode *const *)a, *y = *(const struct fnode *const *)b;

	return strcmp(x->name, y->name);
}

/*
 * A frame's text is put together here without printf (util/numtext.h)
 * and written in one call per part: printf's parsing of the frames'
 * formats was a fifth of the writer's time, two thirds of it under the
 * fuzzer's sanitizers.  The bytes are printf's.  A part (what lies
 * between a frame's names) is at most LINE_PART bytes, its unit aside:
 * line_part() makes room for a part, so that its appends need no check
 * each (a fuzzer's build hooks every comparison).
 */
#define LINE_PART	640

struct line {
	FILE *out;
	size_t n;
	char b[2 * LINE_PART];
};

static void line_flush(struct line *l)
{
	fwrite(l->b, 1, l->n, l->out);
	l->n = 0;
}

static void line_part(struct line *l)
{
	if (sizeof(l->b) - l->n < LINE_PART)
		line_flush(l);
}

static void line_put(struct line *l, const char *s, size_t len)
{
	memcpy(l->b + l->n, s, len);
	l->n += len;
}

#define line_lit(l, s)	line_put(l, s, sizeof(s) - 1)

/* The unit, of any length: LINE_PART bytes of room left after it. */
static void line_unit(struct line *l, const char *unit)
{
	size_t len = strlen(unit);

	if (len + LINE_PART > sizeof(l->b) - l->n) {
		line_flush(l);
		if (len + LINE_PART > sizeof(l->b)) {
			fwrite(unit, 1, len, l->out);
			return;
		}
	}
	line_put(l, unit, len);
}

static void line_u64(struct line *l, uint64_t v)
{
	l->n += numtext_u64(l->b + l->n, v);
}

static void line_int(struct line *l, int v)
{
	l->n += numtext_i64(l->b + l->n, v);
}

/* "%.2f" */
static void line_fixed2(struct line *l, double v)
{
	size_t k = numtext_fixed2(l->b + l->n, v);

	if (!k) {
		line_flush(l);
		fprintf(l->out, "%.2f", v);
	}
	l->n += k;
}

/* The title's numbers after the name: "(N samples, P%)", or for a diff
 * "(A: P%, B: P%, +C pts, N samples)" (N: B's, the width). */
static void put_values(const struct flame *f, const struct fnode *n, struct line *l)
{
	if (f->diff) {
		/* " (A: %.2f%%, B: %.2f%%, %+.2f pts, %llu %s)", the change
		 * under half a hundredth +0.00 */
		double c = 100.0 * change_of(f, n);

		line_lit(l, " (A: ");
		line_fixed2(l, 100.0 * share_of(n->base, f->root.base));
		line_lit(l, "%, B: ");
		line_fixed2(l, 100.0 * share_of(n->value, f->root.value));
		if (c <= -0.005) {
			line_lit(l, "%, -");
			line_fixed2(l, -c);
		} else {
			line_lit(l, "%, +");
			line_fixed2(l, c < 0.005 ? 0.0 : c);
		}
		line_lit(l, " pts, ");
		line_u64(l, n->value);
		line_lit(l, " ");
		line_unit(l, f->unit);
		line_lit(l, ")");
		return;
	}
	line_lit(l, " (");
	line_u64(l, n->value);
	line_lit(l, " ");
	line_unit(l, f->unit);
	line_lit(l, ", ");
	line_fixed2(l, 100.0 * share_of(n->value, f->root.value));
	line_lit(l, "%)");
}

/*
 * n's frame, then its children's.  kids: room for the children of n and
 * of every node under it on one path (the graph's node count is enough):
 * each node's sorted children at its start, the deeper nodes' after them.
 */
static void write_node(const struct flame *f, const struct fnode *n, struct line *l, uint64_t x,
		       int depth, int height, double scale, double full, const struct fnode **kids)
{
	size_t nr = 0, i;
	uint64_t cx = x;
	double w = (double)n->value * scale;
	const char *name = n->name ? n->name : "all";
	double left = FG_PAD_SIDE + (double)x * scale;
	bool light_text = false;
	int r, g, b;

	if (w < FG_MIN_PX)
		return;
	if (f->diff)
		diff_colour(change_of(f, n) / full, &r, &g, &b, &light_text);
	else if (n->name)
		colour(name, &r, &g, &b);
	else
		r = 230, g = 150, b = 60;
	/* <g class="f" data-x="X" data-w="VALUE" data-d="DEPTH"><title>NAME
	 * (VALUES)</title><rect x="LEFT" y="Y" width="W" height="15"
	 * fill="rgb(R,G,B)" rx="2"/><text x="LEFT+3" y="Y"[ style]>NAME</text></g> */
	line_part(l);
	line_lit(l, "<g class=\"f\" data-x=\"");
	line_u64(l, x);
	line_lit(l, "\" data-w=\"");
	line_u64(l, n->value);
	line_lit(l, "\" data-d=\"");
	line_int(l, depth);
	line_lit(l, "\"><title>");
	line_flush(l);
	xml_fputs(l->out, name);
	line_part(l);
	put_values(f, n, l);
	line_lit(l, "</title><rect x=\"");
	line_fixed2(l, left);
	line_lit(l, "\" y=\"");
	line_int(l, height - FG_PAD_BOTTOM - (depth + 1) * FG_FRAME_H);
	line_lit(l, "\" width=\"");
	line_fixed2(l, w);
	line_lit(l, "\" height=\"");
	line_int(l, FG_FRAME_H - 1);
	line_lit(l, "\" fill=\"rgb(");
	line_int(l, r);
	line_lit(l, ",");
	line_int(l, g);
	line_lit(l, ",");
	line_int(l, b);
	line_lit(l, ")\" rx=\"2\"/><text x=\"");
	line_fixed2(l, left + 3);
	line_lit(l, "\" y=\"");
	line_int(l, height - FG_PAD_BOTTOM - depth * FG_FRAME_H - 4);
	line_lit(l, "\"");
	if (light_text)
		line_lit(l, " style=\"fill:#fff\"");
	line_lit(l, ">");
	line_flush(l);
	xml_fputs(l->out, name);
	fputs("</text></g>\n", l->out);
	/* children sorted by name, as FlameGraph does: the same graph for the
	 * same stacks whatever order they came in */
	for (const struct fnode *c = n->child; c; c = c->next)
		kids[nr++] = c;
	qsort(kids, nr, sizeof(*kids), compare_names);
	for (i = 0; i < nr; i++) {
		write_node(f, kids[i], l, cx, depth + 1, height, scale, full, kids + nr);
		cx += kids[i]->value;
	}
}

/* The page's script: zoom, reset, search.  Frames carry their sample
 * range (data-x, data-w) and depth, so zooming is a rescale of x.  Its
 * numbers (W, P, T) are printed before it; the rest is written as it is
 * (a format of 2.5 KB cost more than all the frames of a small graph). */
static const char script[] =
"frames=[],zoomed=null,searchRe=null;\n"
"function init(){var g=document.querySelectorAll('g.f');for(var i=0;i<g.length;i++){var e=g[i];"
"frames.push({e:e,x:+e.getAttribute('data-x'),w:+e.getAttribute('data-w'),d:+e.getAttribute('data-d'),"
"r:e.querySelector('rect'),t:e.querySelector('text'),n:e.querySelector('title').textContent.replace(/ \\([^()]*\\)$/,'')});"
"e.addEventListener('click',onclick);}"
"document.getElementById('reset').addEventListener('click',function(){zoom(null)});"
"document.getElementById('search').addEventListener('click',function(){search(prompt('Search (a regular expression)',''))});"
"window.addEventListener('keydown',function(ev){if(ev.ctrlKey&&ev.key=='f'){ev.preventDefault();search(prompt('Search (a regular expression)',''));}});"
"zoom(null);var h=decodeURIComponent(location.hash.slice(1));"
"if(h.indexOf('zoom=')==0){var z=frames.find(function(x){return x.n==h.slice(5)});if(z)zoom(z);}"
"else if(h.indexOf('search=')==0)search(h.slice(7));}\n"
"function onclick(ev){var f=frames.find(function(x){return x.e===ev.currentTarget});zoom(f.d==0?null:f);}\n"
"function label(f,w){var n=Math.floor((w-6)/7);f.t.textContent=n<3?'':(f.n.length<=n?f.n:f.n.substr(0,n-2)+'..');}\n"
"function zoom(z){zoomed=z;var x0=z?z.x:0,w0=z?z.w:T,d0=z?z.d:0;"
"document.getElementById('reset').style.display=z?'':'none';"
"frames.forEach(function(f){var vis,x,w;"
"if(f.x>=x0&&f.x+f.w<=x0+w0&&f.d>=d0){vis=true;x=(f.x-x0)/w0*W;w=f.w/w0*W;}"
"else if(f.d<d0&&f.x<=x0&&f.x+f.w>=x0+w0){vis=true;x=0;w=W;f.e.style.opacity=0.6;}else vis=false;"
"if(f.d>=d0)f.e.style.opacity=1;"
"f.e.style.display=vis&&w>=0.3?'':'none';if(!vis)return;"
"f.r.setAttribute('x',P+x);f.r.setAttribute('width',w);f.t.setAttribute('x',P+x+3);label(f,w);});paint();}\n"
"function search(s){if(s===null)return;searchRe=s?new RegExp(s):null;paint();}\n"
"function paint(){var hit=0,seen=[];frames.forEach(function(f){var m=searchRe&&searchRe.test(f.n);"
"f.r.style.fill=m?'rgb(230,0,230)':'';if(m&&!seen.some(function(s){return f.x>=s.x&&f.x+f.w<=s.x+s.w})){seen.push(f);hit+=f.w;}});"
"document.getElementById('matched').textContent=searchRe?'Matched: '+(100*hit/T).toFixed(2)+'%':'';}\n"
"window.addEventListener('load',init);\n";

/* Differential: the baseline's line and the legend under the title. */
static void write_diff_header(const struct flame *f, FILE *out, double full, uint64_t vanished)
{
	fprintf(out, "<text x=\"%.1f\" y=\"42\" text-anchor=\"middle\">", FG_WIDTH / 2);
	xml_fputs(out, f->baseline ? f->baseline : "against the baseline A");
	fprintf(out, "</text>\n<text x=\"%.1f\" y=\"60\" text-anchor=\"middle\">widths: B's %s; "
		"colour: the change of a frame's share of its side's total, "
		"red grew, blue shrank, full at %.2f points",
		FG_WIDTH / 2, f->unit, 100.0 * full);
	if (vanished)
		fprintf(out, "; frames of A only (%.2f%% of A) not drawn: swap the sides to see them",
			100.0 * share_of(vanished, f->root.base));
	fputs("</text>\n", out);
}

int flame__write_svg(const struct flame *f, FILE *out, const char *title)
{
	int pad_top = FG_PAD_TOP + (f->diff ? FG_DIFF_PAD : 0);
	int height = pad_top + FG_PAD_BOTTOM + (f->max_depth + 1) * FG_FRAME_H;
	double scale = f->root.value ? (FG_WIDTH - 2 * FG_PAD_SIDE) / (double)f->root.value : 0;
	double full = FG_DIFF_FULL;
	uint64_t vanished = 0;
	const struct fnode **kids = malloc((f->nodes + 1) * sizeof(*kids));
	struct line l = { .out = out };

	if (!kids)
		return -ENOMEM;

	if (f->diff)
		diff_scan(f, &f->root, scale, &full, &vanished);
	fprintf(out, "<?xml version=\"1.0\" standalone=\"no\"?>\n"
		"<svg version=\"1.1\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
		"xmlns=\"http://www.w3.org/2000/svg\">\n"
		"<style>text{font-family:Verdana,sans-serif;font-size:12px;fill:#000}"
		"g.f text{pointer-events:none}g.f:hover rect{stroke:#000;stroke-width:0.5}"
		"#reset,#search{cursor:pointer}</style>\n"
		"<rect x=\"0\" y=\"0\" width=\"100%%\" height=\"100%%\" fill=\"#f8f8f0\"/>\n"
		"<text x=\"%.1f\" y=\"24\" text-anchor=\"middle\" style=\"font-size:17px\">",
		(int)FG_WIDTH, height, (int)FG_WIDTH, height, FG_WIDTH / 2);
	xml_fputs(out, title ? title : "Flame Graph");
	fprintf(out, "</text>\n<text id=\"reset\" x=\"%.1f\" y=\"24\">Reset zoom</text>\n"
		"<text id=\"search\" x=\"%.1f\" y=\"24\" text-anchor=\"end\">Search</text>\n"
		"<text id=\"matched\" x=\"%.1f\" y=\"%d\" text-anchor=\"end\"></text>\n",
		FG_PAD_SIDE, FG_WIDTH - FG_PAD_SIDE, FG_WIDTH - FG_PAD_SIDE, height - 6);
	if (f->diff)
		write_diff_header(f, out, full, vanished);
	write_node(f, &f->root, &l, 0, 0, height, scale, full, kids);
	free(kids);
	fputs("<script type=\"text/ecmascript\"><![CDATA[\n", out);
	fprintf(out, "var W=%.1f,P=%.1f,T=%llu,", FG_WIDTH - 2 * FG_PAD_SIDE, FG_PAD_SIDE,
		(unsigned long long)(f->root.value ? f->root.value : 1));
	fputs(script, out);
	fputs("]]></script>\n</svg>\n", out);
	return ferror(out) ? -EIO : 0;
}
