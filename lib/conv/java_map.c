/*
 * java_map.c — the order in which java.util.HashMap iterates over its keys
 * (the JDK's views list their groups in it): the table's bins in order,
 * each bin's nodes along their next links. A bin is a list, new keys at
 * its head (computeIfAbsent), until it holds 8 keys in a table of 64 bins
 * or more; then a red-black tree ordered by hash whose root leads the list
 * and whose new keys follow their parent in it. A resize keeps each
 * bin's order in the two bins it splits into, and makes a tree of 6 keys
 * or fewer a list again, and a tree cut in two a tree again. Equal hashes
 * of unequal keys: the JDK breaks the tie by identity hash codes, which no
 * replay can know; here the later key goes left.
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#include "query_run.h"

#include "mem.h"

enum { TREEIFY = 8, UNTREEIFY = 6, MIN_TREE_TABLE = 64 };

typedef struct jnode {
    int32_t h; /* the spread hash: a Java int, compared signed */
    int32_t next, prev, kid[2], parent; /* kid[0] left, kid[1] right */
    bool red, tree;
} jnode;

typedef struct jmap {
    const jfr_allocator *a;
    jnode *n;
    int32_t *bin;
    size_t cap, size, thr;
} jmap;

static int32_t spread(int32_t h) { return (int32_t)((uint32_t)h ^ ((uint32_t)h >> 16)); }

/* ------------------------------------------------------ the red-black tree */

/* HashMap.TreeNode.rotateLeft (d 0) and rotateRight (d 1): p goes down
 * to side d of its child from the other side; the root after. */
static int32_t rotate(jnode *n, int32_t root, int32_t p, int d) {
    int32_t r = n[p].kid[!d];
    if (r < 0)
        return root;
    int32_t rd = n[p].kid[!d] = n[r].kid[d];
    if (rd >= 0)
        n[rd].parent = p;
    int32_t pp = n[r].parent = n[p].parent;
    if (pp < 0) {
        root = r;
        n[r].red = false;
    } else {
        n[pp].kid[n[pp].kid[1] == p] = r;
    }
    n[r].kid[d] = p;
    n[p].parent = r;
    return root;
}

/* HashMap.TreeNode.balanceInsertion: the root after x went in (its two
 * mirrored halves as one, s the side of x's parent). */
static int32_t balance(jnode *n, int32_t root, int32_t x) {
    n[x].red = true;
    for (;;) {
        int32_t xp = n[x].parent, xpp;
        if (xp < 0) {
            n[x].red = false;
            return x;
        }
        if (!n[xp].red || (xpp = n[xp].parent) < 0)
            return root;
        int s = xp != n[xpp].kid[0], u = n[xpp].kid[!s];
        if (u >= 0 && n[u].red) {
            n[u].red = n[xp].red = false;
            n[xpp].red = true;
            x = xpp;
            continue;
        }
        if (x == n[xp].kid[!s]) {
            root = rotate(n, root, x = xp, s);
            xp = n[x].parent;
            xpp = xp < 0 ? -1 : n[xp].parent;
        }
        if (xp >= 0) {
            n[xp].red = false;
            if (xpp >= 0) {
                n[xpp].red = true;
                root = rotate(n, root, xpp, !s);
            }
        }
    }
}

/* Put x under the tree at root, by hash (ties: left): its parent. */
static int32_t tree_attach(jnode *n, int32_t root, int32_t x) {
    for (int32_t p = root;;) {
        int d = n[p].h < n[x].h, c = n[p].kid[d];
        if (c < 0) {
            n[x].parent = p;
            n[p].kid[d] = x;
            return p;
        }
        p = c;
    }
}

/* HashMap.TreeNode.moveRootToFront, in bins[b]. */
static void root_to_front(jnode *n, int32_t *bins, size_t b, int32_t root) {
    int32_t first = bins[b];
    if (root == first)
        return;
    int32_t rn = n[root].next, rp = n[root].prev;
    if (rn >= 0)
        n[rn].prev = rp;
    if (rp >= 0)
        n[rp].next = rn;
    if (first >= 0)
        n[first].prev = root;
    n[root].next = first;
    n[root].prev = -1;
    bins[b] = root;
}

/* HashMap.TreeNode.treeify: a tree of bins[b]'s list, in its order. */
static void treeify(jnode *n, int32_t *bins, size_t b) {
    int32_t root = -1;
    for (int32_t x = bins[b]; x >= 0; x = n[x].next) {
        n[x].tree = true;
        n[x].kid[0] = n[x].kid[1] = n[x].parent = -1;
        if (root < 0) {
            n[x].red = false;
            root = x;
        } else {
            tree_attach(n, root, x);
            root = balance(n, root, x);
        }
    }
    root_to_front(n, bins, b, root);
}

/* ----------------------------------------------------------------- the map */

static bool resize(jmap *m) {
    size_t oc = m->cap, nc = oc ? oc * 2 : 16;
    int32_t *nb = jfr__alloc(m->a, nc * sizeof *nb);
    if (!nb)
        return false;
    for (size_t k = 0; k < nc; k++)
        nb[k] = -1;
    jnode *n = m->n;
    for (size_t j = 0; j < oc; j++) {
        int32_t e = m->bin[j];
        if (e < 0)
            continue;
        bool tree = n[e].tree;
        /* split, keeping the order: lo stays at j, hi goes to j + oc */
        int32_t head[2] = {-1, -1}, tail[2] = {-1, -1};
        size_t count[2] = {0, 0};
        for (int32_t nx; e >= 0; e = nx) {
            nx = n[e].next;
            int s = ((uint32_t)n[e].h & oc) != 0;
            n[e].next = -1;
            n[e].prev = tail[s];
            if (tail[s] < 0)
                head[s] = e;
            else
                n[tail[s]].next = e;
            tail[s] = e;
            count[s]++;
        }
        for (int s = 0; s < 2; s++) {
            size_t b = j + (s ? oc : 0);
            nb[b] = head[s];
            if (!tree || head[s] < 0)
                continue;
            if (count[s] <= UNTREEIFY) {
                for (int32_t x = head[s]; x >= 0; x = n[x].next)
                    n[x].tree = false;
            } else if (head[!s] >= 0) { /* cut in two: a new tree */
                treeify(n, nb, b);
            }
        }
    }
    jfr__free(m->a, m->bin, oc * sizeof *m->bin);
    m->bin = nb;
    m->cap = nc;
    m->thr = nc / 4 * 3;
    return true;
}

/* computeIfAbsent's resize, before it looks for the key. */
static bool call(jmap *m) { return (m->cap && m->size <= m->thr) || resize(m); }

/* A new key x (computeIfAbsent, after call). */
static bool put(jmap *m, int32_t x) {
    jnode *n = m->n;
    size_t b = (uint32_t)n[x].h & (m->cap - 1);
    int32_t first = m->bin[b];
    n[x].kid[0] = n[x].kid[1] = n[x].parent = -1;
    m->size++;
    if (first >= 0 && n[first].tree) { /* putTreeVal: after its parent */
        n[x].tree = true;
        int32_t xp = tree_attach(n, first, x), xpn = n[xp].next;
        n[xp].next = x;
        n[x].prev = xp;
        n[x].next = xpn;
        if (xpn >= 0)
            n[xpn].prev = x;
        root_to_front(n, m->bin, b, balance(n, first, x));
        return true;
    }
    size_t in_bin = 0;
    for (int32_t e = first; e >= 0; e = n[e].next)
        in_bin++;
    n[x].tree = false;
    n[x].prev = -1;
    n[x].next = first;
    if (first >= 0)
        n[first].prev = x;
    m->bin[b] = x;
    if (in_bin < TREEIFY - 1)
        return true;
    /* treeifyBin: a small table grows instead */
    if (m->cap < MIN_TREE_TABLE)
        return resize(m);
    treeify(n, m->bin, b);
    return true;
}

bool jq_java_map_order(const jfr_allocator *a, const int32_t *hash, size_t count, bool trailing,
                       size_t *order) {
    if (count > INT32_MAX)
        return false;
    jmap m = {.a = a, .n = jfr__alloc(a, (count ? count : 1) * sizeof *m.n)};
    bool ok = m.n != NULL;
    for (size_t k = 0; ok && k < count; k++) {
        m.n[k].h = spread(hash[k]);
        ok = call(&m) && put(&m, (int32_t)k);
    }
    if (ok && trailing)
        ok = call(&m);
    size_t at = 0;
    for (size_t b = 0; ok && b < m.cap; b++)
        for (int32_t e = m.bin[b]; e >= 0; e = m.n[e].next)
            order[at++] = (size_t)e;
    jfr__free(a, m.n, (count ? count : 1) * sizeof *m.n);
    jfr__free(a, m.bin, m.cap * sizeof *m.bin);
    return ok;
}
