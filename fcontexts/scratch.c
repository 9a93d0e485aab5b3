/* Per-thread scratch: what a lookup or a digest needs beyond its arguments (key buffers, PCRE2's
 * match data) is made on a thread's first call and kept until the thread ends, so nothing is
 * allocated per call. Each kind keeps its own __thread pointer for the fast path; this file
 * holds the one key whose destructor frees every kind a thread made. */
#include <stdlib.h>

#include "internal.h"

struct slots {
	void *p[FC_SCRATCH_KINDS];
	void (*destroy[FC_SCRATCH_KINDS])(void *);
};

static pthread_key_t slots_key;
static pthread_once_t slots_once = PTHREAD_ONCE_INIT;

static void slots_free(void *v)
{
	struct slots *sl = v;

	for (int k = 0; k < FC_SCRATCH_KINDS; k++)
		if (sl->p[k])
			sl->destroy[k](sl->p[k]);
	free(sl);
}

static void slots_make_key(void)
{
	pthread_key_create(&slots_key, slots_free);
}

void *fc_scratch_new(enum fc_scratch_kind kind, size_t size, void (*destroy)(void *))
{
	struct slots *sl;
	pcre2_match_data **md;

	pthread_once(&slots_once, slots_make_key);
	sl = pthread_getspecific(slots_key);
	if (!sl) {
		if (!(sl = calloc(1, sizeof(*sl))))
			return NULL;
		if (pthread_setspecific(slots_key, sl) != 0) {
			free(sl);
			return NULL;
		}
	}
	/* the scratch's first member is its match data (a pointer to a struct is a pointer to
	 * its first member) */
	if (!(md = calloc(1, size)))
		return NULL;
	if (!(*md = pcre2_match_data_create(1, NULL))) {
		free(md);
		return NULL;
	}
	sl->p[kind] = md;
	sl->destroy[kind] = destroy;
	return md;
}
