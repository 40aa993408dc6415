// SPDX-License-Identifier: GPL-2.0
#include "flamegraph.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "util/buf.h"
#include "util/keymap.h"
#include "util/printable.h"

struct fnode {
	char *name;
	uint64_t value;
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
	struct pbuf key;		/* scratch */
	const char *unit;		/* of the values: "samples" unless set */
};

#define FG_WIDTH	1200.0
#define FG_FRAME_H	16
#define FG_PAD_TOP	48
#define FG_PAD_BOTTOM	24
#define FG_PAD_SIDE	10.0
/* Narrower frames are left out (their samples stay in the parent's width):
 * a graph of 100 000 stacks stays a few MB that a browser opens at once. */
#define FG_MIN_PX	0.3

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

static void free_node(struct fnode *n)
{
	while (n) {
		struct fnode *next = n->next;

		free_node(n->child);
		free(n->name);
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
	c = calloc(1, sizeof(*c));
	if (!c || !(c->name = strdup(name))) {
		free(c);
		return NULL;	/* the index keeps 0 for it: -ENOMEM again if asked */
	}
	c->next = p->child;
	p->child = c;
	*v = (uint64_t)(uintptr_t)c;
	return c;
}

int flame__add(struct flame *f, const char *const *frames, int nr, uint64_t value)
{
	struct fnode *n = &f->root;

	n->value += value;
	for (int i = 0; i < nr; i++) {
		n = child_of(f, n, frames[i] && *frames[i] ? frames[i] : "[unknown]");
		if (!n)
			return -ENOMEM;
		n->value += value;
	}
	if (nr > f->max_depth)
		f->max_depth = nr;
	return 0;
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

static int compare_names(const void *a, const void *b)
{
	const struct fnode *x = *(const struct fnode *const *)a, *y = *(const struct fnode *const *)b;

	return strcmp(x->name, y->name);
}

static int write_node(const struct fnode *n, FILE *out, uint64_t x, int depth, int height,
		      double scale, uint64_t total, const char *unit)
{
	struct fnode **kids = NULL;
	size_t nr = 0, i;
	uint64_t cx = x;
	double w = (double)n->value * scale;
	const char *name = n->name ? n->name : "all";
	int r, g, b;

	if (w < FG_MIN_PX)
		return 0;
	colour(name, &r, &g, &b);
	if (!n->name)
		r = 230, g = 150, b = 60;
	fprintf(out, "<g class=\"f\" data-x=\"%llu\" data-w=\"%llu\" data-d=\"%d\"><title>",
		(unsigned long long)x, (unsigned long long)n->value, depth);
	xml_fputs(out, name);
	fprintf(out, " (%llu %s, %.2f%%)</title><rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"%d\" fill=\"rgb(%d,%d,%d)\" rx=\"2\"/><text x=\"%.2f\" y=\"%d\">",
		(unsigned long long)n->value, unit, total ? 100.0 * (double)n->value / (double)total : 0.0,
		FG_PAD_SIDE + (double)x * scale, height - FG_PAD_BOTTOM - (depth + 1) * FG_FRAME_H,
		w, FG_FRAME_H - 1, r, g, b, FG_PAD_SIDE + (double)x * scale + 3,
		height - FG_PAD_BOTTOM - depth * FG_FRAME_H - 4);
	xml_fputs(out, name);
	fputs("</text></g>\n", out);
	/* children sorted by name, as FlameGraph does: the same graph for the
	 * same stacks whatever order they came in */
	for (const struct fnode *c = n->child; c; c = c->next)
		nr++;
	if (nr) {
		kids = malloc(nr * sizeof(*kids));
		if (!kids)
			return -ENOMEM;
		i = 0;
		for (struct fnode *c = n->child; c; c = c->next)
			kids[i++] = c;
		qsort(kids, nr, sizeof(*kids), compare_names);
	}
	for (i = 0; i < nr; i++) {
		int err = write_node(kids[i], out, cx, depth + 1, height, scale, total, unit);

		if (err) {
			free(kids);
			return err;
		}
		cx += kids[i]->value;
	}
	free(kids);
	return 0;
}

/* The page's script: zoom, reset, search.  Frames carry their sample
 * range (data-x, data-w) and depth, so zooming is a rescale of x. */
static const char script[] =
"var W=%.1f,P=%.1f,T=%llu,frames=[],zoomed=null,searchRe=null;\n"
"function init(){var g=document.querySelectorAll('g.f');for(var i=0;i<g.length;i++){var e=g[i];"
"frames.push({e:e,x:+e.getAttribute('data-x'),w:+e.getAttribute('data-w'),d:+e.getAttribute('data-d'),"
"r:e.querySelector('rect'),t:e.querySelector('text'),n:e.querySelector('title').textContent.replace(/ \\([0-9]+ [a-z]+, [0-9.]+%%\\)$/,'')});"
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
"document.getElementById('matched').textContent=searchRe?'Matched: '+(100*hit/T).toFixed(2)+'%%':'';}\n"
"window.addEventListener('load',init);\n";

int flame__write_svg(const struct flame *f, FILE *out, const char *title)
{
	int height = FG_PAD_TOP + FG_PAD_BOTTOM + (f->max_depth + 1) * FG_FRAME_H;
	double scale = f->root.value ? (FG_WIDTH - 2 * FG_PAD_SIDE) / (double)f->root.value : 0;
	int err;

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
	err = write_node(&f->root, out, 0, 0, height, scale, f->root.value, f->unit);
	if (err)
		return err;
	fputs("<script type=\"text/ecmascript\"><![CDATA[\n", out);
	fprintf(out, script, FG_WIDTH - 2 * FG_PAD_SIDE, FG_PAD_SIDE,
		(unsigned long long)(f->root.value ? f->root.value : 1));
	fputs("]]></script>\n</svg>\n", out);
	return ferror(out) ? -EIO : 0;
}
