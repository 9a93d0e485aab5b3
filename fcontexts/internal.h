/* Private to fcontexts/: the compiled form of a file_contexts set. */
#ifndef FC_INTERNAL_H
#define FC_INTERNAL_H

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "fcontexts.h"

/* Mode classes: 0 = mode 0 (typed specs match anything), 1..7 = the seven file types,
 * 8 = any other S_IFMT value (only untyped specs match). A spec's class is 0 when untyped. */
#define FC_NCLASS 9
#define FC_CLASS_OTHER 8

enum spec_kind {
	SK_LITERAL,  /* libselinux "plain" and a literal string: matches K == lit or K == lit "\n" */
	SK_PLAINRE,  /* libselinux "plain" but with escapes like \d: a regex in the plain tier */
	SK_REGEX,    /* has metacharacters: the regex tier */
};

struct spec {
	struct fc_spec pub;
	uint8_t kind;
	uint8_t tclass;     /* 0 untyped, 1..7 */
	bool none;          /* context is <<none>> */
	bool dead;          /* its stem can never equal a key's stem: never tried */
	bool unsure;        /* its regex might not compile (fc_regex_surely_compiles false) */
	char *lit;          /* SK_LITERAL: the string it matches (escapes resolved) */
	size_t litlen;
	char *q;            /* a key must start with q to be a candidate (stem rule included) */
	size_t qlen;
	/* "^REGEX$" (NULL for SK_LITERAL): compiled at load when the regex might not compile
	 * (unsure), otherwise when first needed (fc_code) */
	_Atomic(pcre2_code *) re;
	char *req;          /* a literal every match contains at or after offset reqfrom... */
	size_t reqlen;      /* ...of this length (0: none known) */
	size_t reqfrom;
	size_t reqslash;    /* where req's last '/' is (reqlen: none) */
	uint64_t pairs[4];  /* bits of every byte pair of req: the key must have them all */
	/* a copy of re with JIT code for lookups, made once the spec has been tried FC_JIT_AFTER
	 * times (re itself is only interpreted by lookups, so no thread matches a pattern while
	 * JIT code is being added to it) */
	_Atomic(pcre2_code *) jre;
	_Atomic unsigned uses;
	uint8_t form;       /* FORM_*: a regex whose match needs no PCRE2 once the key has q */
	/* libselinux 3.4's metacharacter flag and stem length (fc_scan34), when the reader has
	 * already scanned the regex for them (a compiled file's are checked against them): the
	 * index does not scan again */
	bool shaped, meta34;
	uint32_t stem34;
	unsigned col;       /* 1-based column of the regex in its line */
	unsigned tier_pos;  /* priority within the tier: higher is tried first */
	int next_same;      /* literal hash chain: next spec with the same literal, lower priority */
};

/* Regex forms matched without PCRE2 (DOTALL, "^...$"), for a key that starts with q = P:
 * "P(/.*)?" matches when the rest is empty, "\n", or starts with '/'; "P.*" always. */
enum { FORM_PCRE = 0, FORM_SUBTREE, FORM_ANYSUFFIX };

/* A JIT compile costs tens of microseconds, an interpreted match of a path well under one: a
 * spec gets JIT code after this many tries. */
#define FC_JIT_AFTER 64

/* The candidates for a (required prefix, mode class): specs in priority order. */
struct chunkset {
	unsigned *all;
	unsigned nall;
};

/* A node of a tier's radix tree over required prefixes (struct spec.q). */
struct qnode {
	const char *label;  /* edge label from the parent */
	unsigned len;
	unsigned nkids;
	unsigned char kc[8]; /* the first bytes of the first 8 kids' labels (built last) */
	struct qnode **kids; /* sorted by first byte of label */
	int qid;            /* index into tier.q when some spec requires exactly this prefix */
};

struct qentry {
	int parent;         /* the nearest shorter required prefix that is a prefix of this one */
	unsigned nspecs;
	unsigned *specs;    /* specs requiring exactly this prefix, in priority order */
	_Atomic(struct chunkset *) cs[FC_NCLASS];
};

struct tier {
	unsigned nspecs;
	struct qnode *root;
	unsigned nq;
	struct qentry *q;
	int rootq;          /* qid of the empty prefix, or -1 */
	unsigned *order;    /* spec index at each priority, lowest first (literals included) */
};

struct subst {
	char *src, *dst;
	size_t slen, dlen;
};

struct sublist {
	struct subst *v;    /* in file order; searched from the end */
	size_t n;
	size_t maxdst;      /* the longest DST */
	/* fc_first_hash of each SRC's first component: a key whose first
	 * component's bit is clear has no SRC as a prefix (set by fc_index_subs) */
	uint64_t first[4];
};

struct fc_dindex; /* digest.c's index, opaque elsewhere */

struct fc_set {
	struct spec *specs;
	size_t nspecs, cap;
	char **bufs;        /* file contents; spec strings point into them */
	size_t nbufs;
	struct arena {
		char *base;
		size_t cap, used, last; /* last: where the latest block starts */
	} arena;            /* fc_balloc */
	struct bigmap {
		void *p;
		size_t len;
	} *bigs;            /* blocks too big for the arena */
	size_t nbigs;
	char **names;       /* file names for fc_spec.file */
	size_t nnames;
	struct sublist subs, dist;
	/* literal hash over SK_LITERAL specs: bucket -> highest-priority spec, -1 empty */
	int *lhash;
	size_t lmask;
	uint64_t litlens[4]; /* bit L (255: 255 or more): some literal spec is L bytes long */
	uint64_t litfirst[4]; /* fc_first_bit's bits of the literal specs' first components */
	struct tier plain, regex;
	pthread_mutex_t lock; /* guards lazy chunk building */
	char *warning;        /* what loading worked around (fc_load_warning), or NULL */
	bool compare_only;    /* FC_COMPARE_ONLY: no index; the specs are not shaped */
	unsigned char *ahead_ring; /* ahead.c's chunk, in the arena: for every compiled file read */
	struct fc_ahead *ahead_ended; /* its threads, stopped, to join (fc_ahead_reap) */
	/* digest.c: built by the first fc_digest under lock; one block kept in bufs */
	_Atomic(struct fc_dindex *) dindex;
	/* the literal specs (not dead) sorted by their string, for fc_literal_under: built by
	 * its first call, under lock */
	_Atomic(unsigned *) litsort;
	unsigned nlitsort;
	/* this set among every set the process loaded: what a thread's directory memo
	 * (dirmemo.c) was made for (a set freed and another made at its address differ) */
	uint64_t serial;
};

/* The largest file a set reads (1 GiB). */
#define FC_MAX_FILE (1u << 30)

/* specs.c: building the spec list, for the text and the compiled readers alike */
void fc_seterr(struct fc_error *err, const char *file, unsigned line, unsigned col,
	       const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* Reads a whole file (NUL-terminated at *len; in the set's arena). ENOENT is returned silently
 * when optional.
 * With bin_fd non-NULL, a compiled file (by its magic number) is not read: *bin_fd is its
 * open descriptor (for the caller to close), *len its size, *out NULL; else *bin_fd is -1. */
int fc_read_file(struct fc_set *set, const char *path, bool optional, char **out, size_t *len,
		 int *bin_fd, struct fc_error *err);
/* The set owns buf (malloc'd) from now on, even on failure. */
int fc_keep_buf(struct fc_set *set, char *buf);
/* The set's bulk memory (see specs.c): n bytes aligned to align (a power of two), freed with
 * the set. fc_bshrink: the latest block p needs only n bytes after all. */
void *fc_balloc(struct fc_set *set, size_t n, size_t align);
void fc_bshrink(struct fc_set *set, void *p, size_t n);
/* n bytes of a mapping of their own, freed with the set (for another thread: the arena is the
 * loading thread's) */
void *fc_bmap(struct fc_set *set, size_t n);
void fc_arena_free(struct fc_set *set);
/* Records a file name for fc_spec.file; *fileno_ is its index. */
int fc_keep_name(struct fc_set *set, const char *path, unsigned *fileno_);
/* A spec with every field zero, to start one from: its copy is a few vector moves, where
 * "= {0}" is a rep stos (its start-up was most of the compiled reader's add_spec) */
extern const struct spec fc_blank_spec;
/* Appends a spec whose regex, mode and context are set, filling in its derived fields. */
int fc_push_spec(struct fc_set *set, struct spec *s);
/* Room for n more specs (a hint: fc_push_spec grows the list anyway). */
int fc_reserve(struct fc_set *set, size_t n);

/* parse.c: text file_contexts in buf (kept by the set), and substitution files */
int fc_parse_text(struct fc_set *set, unsigned fileno_, char *buf, size_t len,
		  struct fc_error *err);
int fc_parse_subs(struct fc_set *set, const char *path, struct sublist *list, bool optional,
		  struct fc_error *err);

/* binfile.c: compiled file_contexts (sefcontext_compile's .bin), found by its magic number (in
 * either byte order: libselinux writes the host's). Inline here so that specs.c and load.c, which
 * only sniff a file's first bytes, do not call into binfile.c, which calls into them. */
#define FC_BIN_MAGIC 0xf97cff8au
static inline bool fc_bin_magic(const char *buf, size_t len)
{
	const unsigned char *p = (const unsigned char *)buf;
	if (len < 4)
		return false;
	uint32_t le = (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[1] << 8 | p[0];
	uint32_t be = (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
	return le == FC_BIN_MAGIC || be == FC_BIN_MAGIC;
}
/* From buf (the whole file) or, when buf is NULL, read from fd (len bytes). */
int fc_parse_bin(struct fc_set *set, unsigned fileno_, const char *buf, int fd, size_t len,
		 struct fc_error *err);

/* ahead.c: a compiled file's bytes, read a chunk at a time, and its specs' analyses shared with
 * a thread of the load's own when the file is large. The caller asks for ranges [off, off + n) at
 * increasing offsets (within len); each call gives the bytes [*base, *base + *len) at *b, which
 * hold the range and stay valid until the next call. Errors (read failures, a file that shrank)
 * are set in err, naming path. */
struct fc_ahead;
int fc_ahead_open(struct fc_ahead **out, struct fc_set *set, int fd, size_t len,
		  const char *path, struct fc_error *err);
int fc_ahead_get(struct fc_ahead *a, size_t off, size_t n, const unsigned char **b,
		 size_t *base, size_t *len);
/* The reader is done with a: the thread, when there is one, is stopped (it touches no spec after)
 * and left for fc_ahead_reap to join. */
void fc_ahead_close(struct fc_ahead *a, struct fc_set *set);
/* Joins the threads stopped by fc_ahead_close (by then they have ended). */
void fc_ahead_reap(struct fc_set *set);
/* The specs' analyses (fc_analyze_spec) shared with the thread, when there is one: true when
 * shared. The set's list must have room for the more specs still to come (it must not move);
 * each is announced once complete, with the list's new length (fc_ahead_pushed). */
bool fc_ahead_share(struct fc_ahead *a, struct fc_set *set, size_t more);
/* The thread reads the file from about from (a chunk boundary) to its end before it analyses
 * anything, while the reader parses what comes before; a range there is then taken from what it
 * read, if it has (else the reader reads it, as any other). Before any sharing; nothing when there
 * is no thread or no room for it. */
void fc_ahead_tail(struct fc_ahead *a, size_t from);
/* Or a list of n specs of the reader's own, outside the set (format 6 reads its specs in another
 * order than the set's): NULL when there is no thread or no room for it. Announced and finished
 * in the same way, they are then copied into the set. */
struct spec *fc_ahead_stage(struct fc_ahead *a, size_t n);
void fc_ahead_pushed(struct fc_ahead *a, size_t n);
/* The reader analyses what the thread has not claimed, and waits for what it has: every spec
 * shared is then analysed (or left to fc_build_index), and no longer shared. */
void fc_ahead_finish(struct fc_ahead *a, struct fc_set *set);

/* load.c: one file, text or compiled */
int fc_parse_file(struct fc_set *set, const char *path, bool optional, struct fc_error *err);

/* lookup.c: the key a lookup and a digest use for path[0..len) (path[len] is NUL): runs of '/'
 * made one, one trailing '/' dropped (not from "/"), then the substitutions, local then dist.
 * a and b are scratch of len + fc_key_room(set) bytes each; returns the key (path itself when
 * nothing changes it, else in a or b; NUL-terminated), its length in *keylen. */
static inline size_t fc_key_room(const struct fc_set *set)
{
	return set->subs.maxdst + set->dist.maxdst + 2;
}
/* Fills l->maxdst and l->first once every line is read. */
void fc_index_subs(struct sublist *l);

const char *fc_make_key(const struct fc_set *set, const char *path, size_t len, char *a, char *b,
			size_t *keylen);

/* scan.c */
struct regex_shape {
	bool meta;          /* libselinux 3.4's hasMetaChars */
	bool literal;       /* no metacharacters and only escapes of punctuation */
	size_t stem_len;    /* libselinux 3.4's stem, 0 for none */
};
/* meta and stem_len only (literal is left unset) */
void fc_scan34(const char *re, struct regex_shape *shape);
void fc_scan_regex(const char *re, struct regex_shape *shape, char *prefix, size_t *prefix_len,
		   char *req, size_t *req_len);
/* fc_scan_regex when shape's meta and stem_len are already fc_scan34's */
void fc_scan_regex_shaped(const char *re, struct regex_shape *shape, char *prefix,
			  size_t *prefix_len, char *req, size_t *req_len);

/* Prefixes, one of which every match of a regex "LIT(A|B|...)LIT..." starts with (see scan.c);
 * 0 when the regex is not of that form. out needs max * strlen(re) bytes. */
size_t fc_prefix_alts(const char *re, char *out, size_t *lens, size_t max);
/* Whether re[0..n) is literal text only; its unescaped bytes to out, their count to *outlen. */
bool fc_literal_span(const char *re, size_t n, char *out, size_t *outlen);
/* True when "^RE$" certainly compiles: its compile may wait until a lookup needs it. */
bool fc_regex_surely_compiles(const char *re);

/* index.c */
/* The per-spec half of the index (kind, required prefix, literal run, form; q set), for a spec
 * not yet pushed or in the list (fc_build_index does it for every spec without q). */
int fc_analyze_spec(struct fc_set *set, struct spec *s);
/* The same into p (fc_shape_room(s) bytes); returns the bytes it keeps there. */
size_t fc_analyze_at(struct spec *s, char *p);
int fc_build_index(struct fc_set *set, struct fc_error *err);
/* What the index derives from one spec alone (kind, q, lit, req, dead, form), into p: room
 * for fc_shape_room(s) bytes, of which it takes what *used grows by. A regex that might not
 * compile is compiled: EINVAL with err naming its file, line and column. */
size_t fc_shape_room(const struct spec *s);
int fc_shape_spec(struct spec *s, char *p, size_t *used, struct fc_error *err);
/* A non-literal spec's compiled regex, compiled now if it was left for later (safe from any
 * thread); NULL only when out of memory. */
pcre2_code *fc_code(const struct spec *s);
/* Counts a lookup's try of s; at the FC_JIT_AFTER-th, makes its JIT copy (s->jre). */
void fc_count_try(const struct spec *s);
void fc_free_index(struct fc_set *set);
const struct chunkset *fc_chunkset(const struct fc_set *set, const struct tier *t, int qid,
				   unsigned cls);
int fc_find_q(const struct tier *t, const char *key, size_t len);
/* fc_find_q in steps: a walk down the tree that can stop at the end of a key's directory part
 * and go on, for each key of that directory, from there (the walk's steps before a stop use only
 * the bytes before it). best: the deepest required prefix met (-1 none). */
struct qwalk {
	const struct qnode *n;
	size_t pos;
	int best;
};
static inline void fc_qwalk_start(const struct tier *t, struct qwalk *w)
{
	w->n = t->root;
	w->pos = 0;
	w->best = t->rootq;
}
/* Goes on down key[0..len), of which key[0..w->pos) is the walk's so far. */
void fc_qwalk(struct qwalk *w, const char *key, size_t len);
/* Whether some literal spec's string starts with p[0..n) (built on the first call). */
bool fc_literal_under(const struct fc_set *set, const char *p, size_t n);
int fc_literal_find(const struct fc_set *set, const char *key, size_t len);
uint64_t fc_hash(const char *s, size_t n);

/* The 256-bit set of byte pairs of s[0..n): a cheap necessary test for "contains". */
static inline unsigned fc_pair_bit(unsigned char a, unsigned char b)
{
	return ((a * 31u) ^ (b * 7u) ^ (b >> 3)) & 255u;
}

static inline void fc_pairs(const char *s, size_t n, uint64_t set[4])
{
	set[0] = set[1] = set[2] = set[3] = 0;
	for (size_t i = 0; i + 1 < n; i++) {
		unsigned bit = fc_pair_bit((unsigned char)s[i], (unsigned char)s[i + 1]);
		set[bit >> 6] |= 1ull << (bit & 63);
	}
}

/* A 64-bit set of the bytes of s[0..n) (each byte's low 6 bits): a cheap necessary test for
 * "contains", for short strings (a name), in one register. */
static inline uint64_t fc_byteset(const char *s, size_t n)
{
	uint64_t set = 0;

	for (size_t i = 0; i < n; i++)
		set |= 1ull << ((unsigned char)s[i] & 63);
	return set;
}

/* The bit of s[0..n)'s first component (up to its second '/', searched from s[1], or all of
 * it) in a 256-bit set: a string that has another as a prefix up to a '/' or its end has the
 * other's first component. First components are short ("/usr", "/work"): a loop, and a hash of
 * their length and two bytes, cost less than memchr and fc_hash. */
static inline unsigned fc_first_hash(const char *s, size_t n)
{
	size_t i = 1;

	while (i < n && s[i] != '/')
		i++;
	if (i > n)
		i = n; /* n == 0 */
	return (unsigned)(i * 131u + (i > 1 ? (unsigned char)s[1] * 31u : 0) +
			  (i ? (unsigned char)s[i - 1] : 0)) & 255u;
}

static inline bool fc_first_bit(const uint64_t bits[4], const char *s, size_t n)
{
	unsigned b = fc_first_hash(s, n);
	return bits[b >> 6] >> (b & 63) & 1;
}

static inline void fc_first_set(uint64_t bits[4], const char *s, size_t n)
{
	unsigned b = fc_first_hash(s, n);
	bits[b >> 6] |= 1ull << (b & 63);
}

static inline unsigned fc_mode_class(mode_t mode)
{
	switch (mode & 0170000) {
	case 0: return 0;
	case 0100000: return 1;
	case 0040000: return 2;
	case 0020000: return 3;
	case 0060000: return 4;
	case 0010000: return 5;
	case 0120000: return 6;
	case 0140000: return 7;
	default: return FC_CLASS_OTHER;
	}
}

static inline bool fc_class_ok(unsigned spec_class, unsigned key_class)
{
	return spec_class == 0 || key_class == 0 || spec_class == key_class;
}

/* dirmemo.c: what a lookup of DIR/NAME can know from DIR alone, made once for the directory
 * and used by each of its names while lookups stay in it (a walk looks up a directory's entries
 * one after another). Per thread, in the lookup scratch. */
enum dcand_how {
	D_SURE,    /* matches every name (a "P.*", or "P(/.*)?" whose P ends in DIR before a '/') */
	D_PCRE,    /* its literal run is in DIR: the regex decides */
	D_INNAME,  /* its literal run (no '/') must be in NAME, then the regex decides */
	D_HEAD,    /* its literal run ends in DIR on its last '/': NAME must start with the rest */
	D_WHOLE,   /* the per-key checks on the whole key (the general way's) */
};

/* A candidate of the directory's list: the specs its required prefix leaves possible, in
 * priority order, but those that can match no name in it (and those after one that matches
 * every name of every type). */
struct dcand {
	unsigned spec;
	uint8_t tclass;
	uint8_t how;        /* enum dcand_how */
	uint16_t blen;
	const char *b;      /* D_INNAME: the run NAME must contain; D_HEAD: NAME's start */
	uint64_t need;      /* D_INNAME: fc_byteset(b), which NAME's must include */
};

struct dtier {
	struct qwalk w;     /* the tier's prefix tree walked down DIR's key */
	bool built;         /* v holds the candidates of qid */
	struct dcand *v;
	unsigned n, cap;
};

struct dirmemo {
	uint64_t serial;    /* the set's (struct fc_set.serial); 0: nothing kept */
	char *dir;          /* the path up to its last '/' */
	size_t dlen, dcap;
	bool usable;        /* false: names below dir take the general way */
	bool key_is_path;   /* no substitution changes DIR: a key is its path */
	bool lit;           /* some literal spec starts with DIR's key */
	bool have_pairs;
	char *key;          /* DIR's key (dir after the substitutions), a NAME copied after it */
	size_t klen, kcap;
	uint64_t pairs[4];  /* DIR's key's byte pairs, when have_pairs */
	struct dtier tier[2]; /* plain, regex */
	unsigned gen;       /* made anew each time the slot is made for a directory */
	/* the parent directory's memo when this one was made from it (its gen then): its lists
	 * hold every candidate that can match below it */
	const struct dirmemo *parent;
	unsigned parent_gen;
};

/* How many directories' memos a thread keeps: one per length of DIR modulo this, so that a
 * walk that comes back to a directory from its subdirectories most often finds its memo. */
#define FC_DIR_SLOTS 16

/* A thread's memos, one per length of DIR modulo FC_DIR_SLOTS. */
struct dirmemos {
	struct dirmemo slot[FC_DIR_SLOTS];
	bool walking;       /* the last lookup found its directory kept */
	/* the last lookup's directory when it took the general way: its fc_hash, length and
	 * set (a second name in it makes its memo) */
	uint64_t lasthash, lastserial;
	size_t lastd;
};

/* The memo for path[0..len) (len = strlen(path)): made for path's directory when a walk goes
 * down into it from a directory with a memo, else on its second name in a row (lookups in no
 * order pay only for hashing each directory's bytes). NULL when the general way must answer
 * (a directory's first name; a relative path, one ending in '/'; a directory that is not clean
 * or whose substitution depends on the name; out of memory). */
struct dirmemo *fc_dir_memo(struct dirmemos *ms, const struct fc_set *set, const char *path,
			    size_t len);
/* The key of path (in m's directory): path itself, or DIR's key with NAME copied after it;
 * NULL when out of memory. */
const char *fc_dir_key(struct dirmemo *m, const char *path, size_t len, size_t *keylen);
/* Tier k's candidates for names whose deepest required prefix is DIR's (m->tier[k].w.best),
 * made on the first call; NULL when out of memory. */
const struct dtier *fc_dir_cands(struct dirmemo *m, const struct fc_set *set, int k);
void fc_dir_free(struct dirmemo *m);

/* Per-thread scratch (scratch.c). Each kind is a struct whose first member is a
 * pcre2_match_data *: fc_scratch_new makes it zeroed with that match data, on the calling
 * thread's first use, and destroy frees it (the match data included) when the thread ends. */
enum fc_scratch_kind { FC_SCRATCH_LOOKUP, FC_SCRATCH_DIGEST, FC_SCRATCH_KINDS };
void *fc_scratch_new(enum fc_scratch_kind kind, size_t size, void (*destroy)(void *));

#endif
