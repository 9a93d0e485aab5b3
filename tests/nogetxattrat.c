/*
 * nogetxattrat CMD [ARG...]: runs CMD as on a kernel older than Linux 6.13, where getxattrat(2)
 * (syscall 464) does not exist: a seccomp filter makes that call fail with ENOSYS, in CMD and
 * every process and thread it starts; every other call goes through. Phones run Linux 4.14 to
 * 6.6, so this is how tests and make bench-tree reach fclabel's fallback (labels read through
 * descriptors) on a newer kernel.
 *
 * nogetxattrat --old CMD [ARG...]: openat2(2) and statx(2) fail with ENOSYS too, as on a kernel
 * before Linux 5.6 (or under a filter that refuses them): fclabel then opens and stats
 * directories with the plain calls.
 *
 * nogetxattrat --probe: calls getxattrat itself and prints what it got ("ENOSYS", or "ok" /
 * another errno when the filter is not there), so that a test can tell the filter works.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#define NR_GETXATTRAT 464 /* the same number on every architecture */

#if defined(__x86_64__)
#define NATIVE_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define NATIVE_ARCH AUDIT_ARCH_AARCH64
#elif defined(__i386__)
#define NATIVE_ARCH AUDIT_ARCH_I386
#elif defined(__arm__)
#define NATIVE_ARCH AUDIT_ARCH_ARM
#else
#error "nogetxattrat: AUDIT_ARCH of this architecture unknown"
#endif

static int install(bool old)
{
	/* old: openat2 and statx refused too (else getxattrat's number stands in for them) */
	unsigned openat2 = old ? SYS_openat2 : NR_GETXATTRAT, statx = old ? SYS_statx : NR_GETXATTRAT;
	struct sock_filter f[] = {
		/* a call of another ABI (x32, a 32-bit one) is let through: only the native
		 * one's numbers are the calls refused here */
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, NATIVE_ARCH, 0, 5),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, NR_GETXATTRAT, 2, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, openat2, 1, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, statx, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (ENOSYS & SECCOMP_RET_DATA)),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = sizeof(f) / sizeof(f[0]), .filter = f };

	/* without privileges a filter needs no_new_privs; it is kept across execve */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)) {
		fprintf(stderr, "nogetxattrat: PR_SET_NO_NEW_PRIVS: %s\n", strerror(errno));
		return -1;
	}
	if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog)) {
		fprintf(stderr, "nogetxattrat: PR_SET_SECCOMP: %s\n", strerror(errno));
		return -1;
	}
	return 0;
}

static int probe(void)
{
	char buf[64];
	struct { unsigned long long value; unsigned size, flags; } args = {
		(unsigned long long)(unsigned long)buf, sizeof(buf), 0
	};
	long r = syscall(NR_GETXATTRAT, AT_FDCWD, "/", 0, "security.selinux", &args,
			 sizeof(args));
	printf("%s\n", r >= 0 ? "ok" : errno == ENOSYS ? "ENOSYS" : strerror(errno));
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: nogetxattrat [--old] CMD [ARG...] | nogetxattrat --probe\n");
		return 2;
	}
	bool old = !strcmp(argv[1], "--old");
	if (old && argc < 3) {
		fprintf(stderr, "usage: nogetxattrat --old CMD [ARG...]\n");
		return 2;
	}
	if (install(old))
		return 2;
	if (!strcmp(argv[1], "--probe"))
		return probe();
	argv += old;
	execvp(argv[1], argv + 1);
	fprintf(stderr, "nogetxattrat: %s: %s\n", argv[1], strerror(errno));
	return 127;
}
