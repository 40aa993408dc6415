// SPDX-License-Identifier: GPL-2.0
/*
 * Persistent treap: split and merge take and give one reference to each
 * subtree they are handed; a node is written only after own() made it
 * private (ref 1), copying it when another tree still holds it.
 */
#include "report/maptree.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

struct maptree_node {
	struct map_range r;
	struct maptree_node *left, *right;
	__u32 prio, ref;
};

size_t maptree__node_size(void)
{
	return sizeof(struct maptree_node);
}

static __u32 next_prio(struct maptree_pool *p)
{
	__u64 x = p->seed ? p->seed : 0x9e3779b97f4a7c15ull;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	p->seed = x;
	return (__u32)(x >> 32);
}

static struct maptree_node *node_new(struct maptree_pool *p, const struct map_range *r)
{
	struct maptree_node *n = malloc(sizeof(*n));

	if (!n)
		return NULL;
	*n = (struct maptree_node){ .r = *r, .prio = next_prio(p), .ref = 1 };
	p->nodes++;
	p->allocs++;
	return n;
}

static void node_put(struct maptree_pool *p, struct maptree_node *n)
{
	while (n && !--n->ref) {
		struct maptree_node *right = n->right;

		node_put(p, n->left);
		free(n);
		p->nodes--;
		n = right;
	}
}

/* n (one reference of which is ours) made private: the same node when
 * only we hold it, else a copy holding its children; NULL when out of
 * memory (our reference is then still on n). */
static struct maptree_node *own(struct maptree_pool *p, struct maptree_node *n)
{
	struct maptree_node *c;

	p->steps++;
	if (n->ref == 1)
		return n;
	c = malloc(sizeof(*c));
	if (!c)
		return NULL;
	*c = *n;
	c->ref = 1;
	if (c->left)
		c->left->ref++;
	if (c->right)
		c->right->ref++;
	n->ref--;
	p->nodes++;
	p->allocs++;
	p->copies++;
	return c;
}

/* n → *l (starts < key) and *r (starts >= key).  -ENOMEM leaves a valid
 * pair of trees that may lack part of n (dropped, not leaked). */
static int split(struct maptree_pool *p, struct maptree_node *n, __u64 key,
		 struct maptree_node **l, struct maptree_node **r)
{
	struct maptree_node *o;

	if (!n) {
		*l = *r = NULL;
		return 0;
	}
	o = own(p, n);
	if (!o) {
		node_put(p, n);
		*l = *r = NULL;
		return -ENOMEM;
	}
	if (o->r.start < key) {
		*l = o;
		return split(p, o->right, key, &o->right, r);
	}
	*r = o;
	return split(p, o->left, key, l, &o->left);
}

/* Every start in a below every start in b.  NULL only when both are. On
 * -ENOMEM (*err) what could not be owned is dropped. */
static struct maptree_node *merge(struct maptree_pool *p, struct maptree_node *a,
				  struct maptree_node *b, int *err)
{
	struct maptree_node *o;

	if (!a || !b)
		return a ? a : b;
	if (a->prio > b->prio) {
		o = own(p, a);
		if (!o) {
			node_put(p, a);
			*err = -ENOMEM;
			return b;
		}
		o->right = merge(p, o->right, b, err);
		return o;
	}
	o = own(p, b);
	if (!o) {
		node_put(p, b);
		*err = -ENOMEM;
		return a;
	}
	o->left = merge(p, a, o->left, err);
	return o;
}

static const struct maptree_node *last(const struct maptree_node *n)
{
	while (n && n->right)
		n = n->right;
	return n;
}

/* The last range of *t, made private along its path (NULL: none, or out
 * of memory with *t unchanged). */
static struct maptree_node *own_last(struct maptree_pool *p, struct maptree_node **t)
{
	struct maptree_node **pp = t;

	while (*pp) {
		struct maptree_node *o = own(p, *pp);

		if (!o)
			return NULL;
		*pp = o;
		if (!o->right)
			return o;
		pp = &o->right;
	}
	return NULL;
}

int maptree__insert(struct maptree *t, struct maptree_pool *p, const struct map_range *r)
{
	struct maptree_node *l, *mid, *rest, *n, *tail = NULL;
	const struct maptree_node *x;
	struct map_range cut;
	bool has_tail = false;
	int err;

	n = node_new(p, r);
	if (!n)
		return -ENOMEM;
	err = split(p, t->root, r->start, &l, &rest);
	if (!err)
		err = split(p, rest, r->end, &mid, &rest);
	else
		mid = NULL;
	/* what the last range starting inside r has beyond it stays */
	x = last(mid);
	if (x && x->r.end > r->end) {
		cut = x->r;
		has_tail = true;
	}
	node_put(p, mid);
	x = last(l);
	if (x && x->r.end > r->start) {
		struct maptree_node *o = own_last(p, &l);

		if (x->r.end > r->end) {	/* r inside it: its end stays */
			cut = x->r;
			has_tail = true;
		}
		if (o)
			o->r.end = r->start;
		else
			err = -ENOMEM;
	}
	if (has_tail) {
		cut.pgoff += r->end - cut.start;
		cut.start = r->end;
		tail = node_new(p, &cut);
		if (!tail)
			err = -ENOMEM;
	}
	rest = merge(p, tail, rest, &err);
	t->root = merge(p, merge(p, l, n, &err), rest, &err);
	return err;
}

const struct map_range *maptree__find(const struct maptree *t, struct maptree_pool *p, __u64 addr)
{
	const struct maptree_node *n = t->root, *best = NULL;

	while (n) {
		p->steps++;
		if (n->r.start <= addr) {
			best = n;
			n = n->right;
		} else {
			n = n->left;
		}
	}
	return best && addr < best->r.end ? &best->r : NULL;
}

void maptree__share(struct maptree *dst, const struct maptree *src, struct maptree_pool *p)
{
	if (dst->root == src->root)
		return;
	if (src->root)
		src->root->ref++;
	node_put(p, dst->root);
	dst->root = src->root;
}

void maptree__release(struct maptree *t, struct maptree_pool *p)
{
	node_put(p, t->root);
	t->root = NULL;
}
