/*
 * fuzz_image: the image walker and labeling engine (labeler/ext4/: image.c, walk.c, xattr.c,
 * xattr_write.c; labeler/engine/; imgfmt/) on a fuzzed image, through the same calls `fclabel check` and `fclabel label` make:
 * img_identify (what the image says it is, and the hint made from its names), img_open,
 * ext4_label, img_close.
 *
 * Input: an ext2/3/4 image (raw, or Android sparse: the format is detected by content). A raw
 * image shorter than its superblock says is extended with zeros (up to 16 MiB), so seeds can be
 * stored with their trailing zeros cut. Byte 512 (unused by ext2/3/4: boot sector) picks options:
 *   bits 0-1  0 plain policy, 1 mount point /system, 2 policy with long contexts (some too big
 *             for an attribute block), 3 excludes /data and /bin/hw
 *   bit 2     --strict      bit 3  relabel: label with a diff from an older policy (prunes)
 *   bit 4     dry run instead of writing   bit 5 verbose   bit 6 JSON report   bit 7 sparse -o
 * Each run: check (read-only), then label (or dry run) writing in place, then check again.
 * With FUZZ_E2FSCK=1 (t_fuzz_regress sets it; too slow for libFuzzer's own runs) the label is
 * judged as the tests judge one: e2fsck -fn's problem lines after it, their numbers made N, may
 * be none that e2fsck did not report before, and none more often (abort otherwise).
 */
#include <errno.h>
#include <et/com_err.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/engine.h"
#include "ext4/ext4.h"
#include "fuzzutil.c"

#define FZ_MAX_INPUT (1 << 20)
#define MAX_EXTEND (16u << 20)

static const char policy_plain[] =
	"/.*\t\t\tu:object_r:system_file:s0\n"
	"/system(/.*)?\t\tu:object_r:system_file:s0\n"
	"/(system/)?bin(/.*)?\t--\tu:object_r:exec_t:s0\n"
	"/(system/)?bin/sh\t--\tu:object_r:shell_exec:s0\n"
	"/(system/)?bin/hw/.*\t--\tu:object_r:hal_exec:s0\n"
	"/(system/)?lib(64)?/.*\\.so\tu:object_r:system_lib_file:s0\n"
	"/(system/)?etc(/.*)?\tu:object_r:etc_t:s0\n"
	"/(system/)?dev(/.*)?\t-c\tu:object_r:device:s0\n"
	"/(system/)?etc/null\t-c\tu:object_r:null_device:s0\n"
	"/(system/)?[^/]*/fifo\t-p\tu:object_r:fifo_t:s0\n"
	"/(system/)?bin/ls\t-l\tu:object_r:link_t:s0\n"
	"/(system/)?lost\\+found(/.*)?\t<<none>>\n"
	"/data(/.*)?\t\tu:object_r:system_data_file:s0\n"
	"/data/cache(/.*)?\t<<none>>\n"
	"/system/vendor(/.*)?\tu:object_r:vendor_file:s0\n"
	"/(vendor|system/vendor)/bin/hw/android\\.hardware\\.[a-z]+@[0-9.]+-service\t--\t"
	"u:object_r:hal_service_exec:s0\n";

/* the relabel's old policy: a few lines differ */
static const char policy_old[] =
	"/.*\t\t\tu:object_r:system_file:s0\n"
	"/system(/.*)?\t\tu:object_r:system_file:s0\n"
	"/(system/)?bin(/.*)?\t--\tu:object_r:old_exec_t:s0\n"
	"/(system/)?lib(64)?/.*\\.so\tu:object_r:system_lib_file:s0\n"
	"/(system/)?etc(/.*)?\tu:object_r:etc_t:s0\n"
	"/(system/)?lost\\+found(/.*)?\t<<none>>\n"
	"/data(/.*)?\t\tu:object_r:data_t:s0\n";

static fc_set *sets[3]; /* plain, long contexts, old */
static struct fc_diff *diff;
static FILE *devnull;

static fc_set *load(const char *name, const char *text)
{
	char path[512];
	struct fc_error err;
	fc_set *set;
	fz_write(fz_path(path, sizeof(path), name), text, strlen(text));
	const char *files[1] = { path };
	if (fc_load(&set, files, 1, FC_BASE_ONLY | FC_NO_DUPS, &err)) {
		fprintf(stderr, "fuzz_image: policy %s: %u: %s\n", name, err.line, err.msg);
		abort();
	}
	return set;
}

static void setup(void)
{
	/* long contexts: 200 bytes (in the inode of a 256-byte inode), 900 (an EA block of
	 * 1 KiB), 5000 (too big for any EA block) */
	size_t cap = 16384;
	char *text = malloc(cap), *ctx = malloc(6000);
	if (!text || !ctx)
		abort();
	snprintf(text, cap, "%s", policy_plain);
	static const size_t lens[] = { 200, 900, 5000 };
	/* regexes unlike the plain policy's (FC_NO_DUPS); later lines win */
	static const char *where[] = { "/(system/)?bin/.*\t--", "/(system/)?etc/.*\t",
				       "/(system/)?lib(64)?/[^/]*\\.so\t" };
	for (int i = 0; i < 3; i++) {
		memset(ctx, 'a' + i, lens[i]);
		memcpy(ctx, "u:object_r:", 11);
		memcpy(ctx + lens[i] - 3, ":s0", 3);
		ctx[lens[i]] = 0;
		size_t l = strlen(text);
		snprintf(text + l, cap - l, "%s\t%s\n", where[i], ctx);
	}
	free(ctx);
	sets[0] = load("plain", policy_plain);
	sets[1] = load("long", text);
	sets[2] = load("old", policy_old);
	free(text);
	if (fc_diff(sets[2], sets[0], &diff, NULL))
		abort();
	devnull = fopen("/dev/null", "w");
	if (!devnull)
		abort();
	initialize_ext2_error_table();
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	setup();
	return 0;
}

static int strcmp_ptr(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* e2fsck -fn's problem lines on path, numbers made N, sorted: *n of them, in a malloc'd array of
 * malloc'd strings (NULL when e2fsck cannot be run). */
static char **problems(const char *path, size_t *n)
{
	char cmd[1024], line[1024];
	snprintf(cmd, sizeof(cmd), "e2fsck -fn '%s' 2>&1", path);
	FILE *p = popen(cmd, "r");
	char **v = NULL;
	size_t cap = 0;
	*n = 0;
	if (!p)
		return NULL;
	while (fgets(line, sizeof(line), p)) {
		if (!strncmp(line, "Pass ", 5) || !strncmp(line, "e2fsck 1.", 9) ||
		    strstr(line, " files (") || strstr(line, "*****") || line[0] == '\n' ||
		    !strncmp(line, "Running additional passes", 25))
			continue;
		/* the image's own name, which differs between the two */
		char *at;
		size_t pl = strlen(path);
		while ((at = strstr(line, path)))
			memmove(at + 3, at + pl, strlen(at + pl) + 1), memcpy(at, "IMG", 3);
		char *o = line;
		for (char *q = line; *q; q++)
			if (*q < '0' || *q > '9')
				*o++ = *q;
			else if (o == line || o[-1] != 'N')
				*o++ = 'N';
		*o = 0;
		if (*n == cap && !(v = realloc(v, (cap = cap ? cap * 2 : 64) * sizeof(*v))))
			abort();
		if (!(v[(*n)++] = strdup(line)))
			abort();
	}
	pclose(p);
	if (*n)
		qsort(v, *n, sizeof(*v), strcmp_ptr);
	return v;
}

/* Aborts when after has a line before lacks, or has it more often. */
static void judge(const char *before_path, const char *after_path)
{
	size_t nb, na;
	char **b = problems(before_path, &nb), **a = problems(after_path, &na);
	size_t i = 0, j = 0;
	while (j < na) {
		int c = i < nb ? strcmp(b[i], a[j]) : 1;
		if (c < 0) {
			i++;
		} else if (c == 0) {
			i++;
			j++;
		} else {
			fprintf(stderr, "fuzz_image: e2fsck -fn reports after the label what it did not "
				"before (or more often): %s", a[j]);
			abort();
		}
	}
	for (size_t k = 0; k < nb; k++)
		free(b[k]);
	for (size_t k = 0; k < na; k++)
		free(a[k]);
	free(b);
	free(a);
}

static uint32_t le32(const uint8_t *p)
{
	return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24;
}

static void run(const char *path, const fc_set *set, const struct label_opts *o0, unsigned flags,
		const struct img_params *ip)
{
	struct image img;
	struct label_stats st;
	struct label_opts o = *o0;

	if (img_open(&img, path, flags, ip, o.cmd))
		return;
	if (o.diff && !image_is_labeled(&img))
		o.diff = NULL;
	int rc = ext4_label(&img, set, &o, &st);
	if (rc)
		img_abandon(&img);
	img_close(&img, o.cmd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static bool inited;
	char path[512], out[512];

	if (!inited) {
		if (!sets[0])
			setup();
		inited = true;
	}
	if (size > FZ_MAX_INPUT)
		return 0;
	fz_path(path, sizeof(path), "image");
	fz_path(out, sizeof(out), "out.simg");
	fz_write(path, data, size);
	unlink(out);
	bool sparse = size >= 4 && le32(data) == 0xed26ff3aU;
	if (!sparse && size >= 1024 + 28) {
		/* the size the superblock gives, when the input is shorter */
		uint64_t blocks = le32(data + 1024 + 4);
		uint32_t logb = le32(data + 1024 + 24);
		if (logb <= 6) {
			uint64_t want = blocks << (10 + logb);
			if (want > size && want <= MAX_EXTEND && truncate(path, (off_t)want) < 0)
				abort();
		}
	}
	unsigned opt = size > 512 ? data[512] : 0;
	char *excl[2] = { "/data", "/bin/hw" };
	const fc_set *set = sets[(opt & 3) == 2 ? 1 : 0];
	struct label_opts o = {
		.mode = LM_CHECK,
		.cmd = "check",
		.mountpoint = (opt & 3) == 1 ? "/system" : "",
		.excludes = (opt & 3) == 3 ? excl : NULL,
		.nexcludes = (opt & 3) == 3 ? 2 : 0,
		.list = devnull,
		.json = (opt & 64) ? devnull : NULL,
	};
	struct img_params ip = { .output = sparse && (opt & 128) ? out : NULL };

	/* what the image says of itself, read before any work (identify.c) */
	struct img_identity id;
	if (!img_identify(path, NULL, &id))
		(void)ident_most_unlabeled("check", path, &id, set, o.mountpoint, 2, 2);
	ident_free(&id);

	/* fclabel check */
	run(path, set, &o, 0, NULL);

	/* fclabel label (or relabel, or a dry run), judged by e2fsck when asked */
	const char *e2 = getenv("FUZZ_E2FSCK");
	bool judged = e2 && *e2 == '1' && !sparse;
	char orig[512];
	if (judged) {
		fz_path(orig, sizeof(orig), "image.orig");
		char cmd[1200];
		snprintf(cmd, sizeof(cmd), "cp --sparse=always '%s' '%s'", path, orig);
		if (system(cmd))
			abort();
	}
	o.mode = (opt & 16) ? LM_DRYRUN : LM_LABEL;
	o.cmd = "label";
	o.strict = opt & 4;
	o.verbose = opt & 32;
	o.list = NULL;
	o.diff = (opt & 8) && set == sets[0] ? diff : NULL;
	run(path, set, &o, o.mode == LM_LABEL ? IMG_RW | IMG_FORCE : 0, &ip);
	if (judged)
		judge(orig, path);

	/* check what was written */
	o.mode = LM_CHECK;
	o.cmd = "check";
	o.strict = false;
	o.verbose = false;
	o.diff = NULL;
	o.list = devnull;
	run(ip.output && access(out, F_OK) == 0 ? out : path, set, &o, 0, NULL);
	return 0;
}
