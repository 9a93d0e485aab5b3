/* What a run of label, check or relabel says when it ends: the summary on stderr, and the JSON
 * report (--json FILE, fclabel-report(5)), valid whatever stopped the run. */
#include <errno.h>
#include <string.h>

#include "run.h"

static const char *const stage_names[] = { "", "arguments", "policy", "mount-point", "target",
					   "walk", "write" };
static const char *const outcome_names[] = { "written", "not-written", "partly-written",
					     "checked", "dry-run" };

/* The report's first fields (fclabel-report(5)): what it is, and of what (a target not given,
 * when the arguments were bad: null). */
void run_report_head(struct run *c)
{
	if (!c->o.json || c->json_head)
		return;
	c->json_head = true;
	struct rpt_run h = {
		.cmd = c->cmd,
		.mode = c->check ? "check" : c->o.mode == LM_DRYRUN ? "dry-run" : "label",
		.target = c->target,
		.tree = c->tree,
		.part_number = c->ip.where.set ? c->ip.where.number : 0,
		.part_name = c->ip.where.name,
		.part_offset = c->ip.where.offset,
		.part_size = c->ip.where.size,
		.policy = c->o.policy_files,
		.npolicy = c->o.npolicy_files,
	};
	rpt_head(c->o.json, &h);
}

/* --json FILE, once the options name it: the report of whatever ends the run goes there. */
int run_report_open(struct run *c)
{
	if (!c->json)
		return 0;
	if (rpt_file_open(&c->rpt, c->json, c->cmd))
		return -1;
	c->o.json = c->rpt.f;
	c->o.json_events = &c->events;
	return 0;
}

/* What the counts line calls the files whose labels were (or would be) changed. */
static const char *changed_word(const struct run *c, enum outcome out)
{
	if (c->check)
		return "differ";
	if (c->o.mode == LM_DRYRUN)
		return "would change";
	return out == OUT_NOTHING ? "to change (not written)" : "changed";
}

/* After a failed or interrupted run: what is on disk, and what to do. */
static void print_outcome(const struct run *c, const struct label_stats *st, enum outcome out,
			  FILE *sum)
{
	if (st->interrupted)
		fprintf(sum, "fclabel %s: %s: interrupted after %lu of about %lu files; ", c->cmd,
			qname(c->target), st->scanned, st->total > st->scanned ? st->total : st->scanned);
	else if (out == OUT_NOTHING || out == OUT_PARTIAL)
		fprintf(sum, "fclabel %s: %s: the run failed (see above); ", c->cmd, qname(c->target));
	else
		return;
	if (out == OUT_NOTHING)
		fprintf(sum, "nothing was written: %s is as it was; run again\n",
			c->tree ? "the tree" : c->ip.output ? "the output" : "the image");
	else if (out == OUT_PARTIAL && !c->tree && c->img.lost)
		fprintf(sum, "the %lu label(s) written went to the file that was opened, which %s "
			"no longer names\n", st->changed, qname(c->target));
	else if (out == OUT_PARTIAL)
		fprintf(sum, "the %lu label(s) written before it stay (each whole); run again to "
			"finish\n", st->written);
	else
		fprintf(sum, "the %s is incomplete; run again\n", c->check ? "check" : "dry run");
}

void run_summary(const struct run *c, const struct label_stats *st, enum outcome out)
{
	FILE *sum = stderr; /* stdout carries data: the check list, -v, the report with --json - */
	fflush(stdout);     /* (its lines whole before the summary, when both go to one file) */
	char links[64] = "";
	if (st->links)
		snprintf(links, sizeof(links), ", hard links %lu", st->links);
	fprintf(sum, "fclabel %s: %s: scanned %lu, %s %lu, unchanged %lu%s, no label %lu, "
		"conflicts %lu, errors %lu, warnings %lu, %.2f s\n", c->cmd, qname(c->target), st->scanned,
		changed_word(c, out), st->changed, st->unchanged, links, st->nolabel, st->conflicts,
		st->errors, st->warnings, st->seconds);
	ident_say(sum, c->cmd, c->target, &c->id, c->check ? "checked" : c->o.mode == LM_DRYRUN ?
		  "dry run" : c->relabel ? "relabeled" : "labeled");
	if (c->relabel)
		fprintf(sum, "fclabel %s: directories entered %lu, skipped (no change can reach them) "
			"%lu%s\n", c->cmd, st->dirs, st->dirs_skipped,
			c->o.diff ? "" : " (a full label: no old policy, or no labels on the image)");
	if (c->o.appdata)
		fprintf(sum, "fclabel %s: app data: %zu package(s) in packages.list; left as they are, as "
			"a device leaves them: %lu with no file_contexts match, %lu package director"
			"%s not in packages.list, %lu whose seapp lookup fails, %lu encrypted "
			"director%s (not entered)\n", c->cmd, pkglist_count(c->pol.pkgs), st->nolabel,
			st->unknown_pkgs, st->unknown_pkgs == 1 ? "y" : "ies", st->seapp_failed,
			st->encrypted, st->encrypted == 1 ? "y" : "ies");
	else if (st->encrypted)
		fprintf(sum, "fclabel %s: %lu encrypted director%s labeled but not entered (their "
			"names are ciphertext)\n", c->cmd, st->encrypted,
			st->encrypted == 1 ? "y" : "ies");
	if (c->o.device) {
		char marked[96] = "";
		if (st->pkgs_in_progress)
			snprintf(marked, sizeof(marked), "; %lu of them marked "
				 "user.restorecon_in_progress", st->pkgs_in_progress);
		fprintf(sum, "fclabel %s: as the device: %lu director%s skipped (digest matches), "
			"package directories %lu right (not entered), %lu wrong (%s whole%s), %lu "
			"label(s) kept (no device walk sets them)\n", c->cmd,
			st->dirs_digest_skipped,
			st->dirs_digest_skipped == 1 ? "y" : "ies", st->pkgs_right, st->pkgs_wrong,
			c->check ? "checked" : c->o.mode == LM_DRYRUN ? "would be relabeled" : "relabeled",
			marked, st->kept);
	}
	if (c->o.device_shadow)
		fprintf(sum, "fclabel %s: a device's /data (security.sehash on %s): %lu of the %lu "
			"difference(s) are levels the device keeps (no boot or unlock walk of its "
			"sets them); --as-device lists only what the device would change\n", c->cmd,
			qname(c->digested_at), st->device_levels, st->changed);
	if (c->o.digests && c->check)
		fprintf(sum, "fclabel %s: digests: %lu missing or stale, %lu right, %lu withheld (a "
			"label at or below them is left to the device: not a fault)\n", c->cmd,
			st->digests_written, st->digests_unchanged, st->digests_withheld);
	else if (c->o.digests)
		fprintf(sum, "fclabel %s: digests: %s %lu, unchanged %lu, withheld %lu (a label at or "
			"below them is left to the device, or not right)\n", c->cmd,
			c->o.mode == LM_DRYRUN ? "would write" : out == OUT_NOTHING ? "not written"
			: "written", st->digests_written, st->digests_unchanged, st->digests_withheld);
	print_outcome(c, st, out, sum);
}

/* The report's last fields (fclabel-report(5)): the counts, what became of the target and the
 * exit status, and what failed. The report is valid JSON whatever stopped the run, and put in
 * place (renamed over FILE) only once it is whole. */
int run_report_close(struct run *c, int status, enum outcome out)
{
	FILE *j = c->o.json;
	const struct label_stats *st = &c->st;
	bool written = out == OUT_WRITTEN || out == OUT_PARTIAL;
	if (!j)
		return status;
	run_report_head(c);
	struct rpt_end e = {
		.events_open = c->json_events,
		.labels_written = written && c->o.mode == LM_LABEL,
		.device = c->o.device,
		.stage = c->stage ? stage_names[c->stage] : NULL,
		.message = c->said,
		.result = outcome_names[out],
		.interrupted = st->interrupted || label_stop_signal,
		.exit_status = status,
	};
	rpt_tail(j, st, &e);
	c->o.json = NULL;
	if (rpt_file_close(&c->rpt, !c->ip.no_sync)) {
		fprintf(stderr, "fclabel %s: --json %s: writing the report failed: %s\n", c->cmd,
			qname(c->json), strerror(errno));
		status = status == EXIT_OK || status == EXIT_DIFFERS ? EXIT_USAGE : status;
	}
	return status;
}
