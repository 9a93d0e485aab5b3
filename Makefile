# fclabel: offline SELinux labeling of ext4 images. Plain GNU make.
# make            build fclabel
# make check      install missing dependencies (as root), build, run every test
# make demo       run the main job on the bundled example
# make bench      lookup benchmark against libselinux (bench-image, bench-relabel, bench-tree,
#                 bench-data: see README)
# make static-arm64, static-armhf   a static fclabel for a phone (mk/cross.mk)

CC      ?= cc
OPT     ?= -O2
CFLAGS  ?= $(OPT) -g
WARN    := -Wall -Wextra -Wno-unused-parameter -Wshadow -Wstrict-prototypes
CPPFLAGS += -D_GNU_SOURCE -Ifcontexts -Iimgfmt -Iandroid -Ilabeler
PKG_CONFIG ?= pkg-config
VERSION := 0.1.0

ifeq ($(SANITIZE),1)
CFLAGS += -fsanitize=address,undefined -fno-omit-frame-pointer
LDFLAGS += -fsanitize=address,undefined
endif

PCRE_CFLAGS = $(shell $(PKG_CONFIG) --cflags libpcre2-8 2>/dev/null)
PCRE_LIBS   = $(shell $(PKG_CONFIG) --libs libpcre2-8 2>/dev/null || echo -lpcre2-8)
# SHA-1 of the directory digests (fcontexts/digest.c)
NETTLE_LIBS = $(shell $(PKG_CONFIG) --libs nettle 2>/dev/null || echo -lnettle)
FC_LIBS     = $(PCRE_LIBS) $(NETTLE_LIBS)
# (libblkid reads the partition tables of disk images: imgfmt/table.c)
E2_LIBS     = $(shell $(PKG_CONFIG) --libs ext2fs com_err blkid 2>/dev/null || echo -lext2fs -lcom_err -lblkid)
SEL_LIBS    = $(shell $(PKG_CONFIG) --libs libselinux 2>/dev/null || echo -lselinux)
# EROFS's compressed files (labeler/erofs/zalg.c): LZ4, MicroLZMA, DEFLATE (zlib), Zstandard
LZ4_LIBS    = $(shell $(PKG_CONFIG) --libs liblz4 2>/dev/null || echo -llz4)
LZMA_LIBS   = $(shell $(PKG_CONFIG) --libs liblzma 2>/dev/null || echo -llzma)
ZSTD_LIBS   = $(shell $(PKG_CONFIG) --libs libzstd 2>/dev/null || echo -lzstd)
EROFS_LIBS  = $(LZ4_LIBS) $(LZMA_LIBS) $(ZSTD_LIBS) -lz
SEPOL_LIBS  = $(shell $(PKG_CONFIG) --libs libsepol 2>/dev/null || echo -lsepol)
# The libraries but libc that fclabel links, as archives (make static, and fclabel's own link
# below); looked up only when a link runs: which archives the compiler finds (it prints the bare
# name for one it does not find)
STATIC_WANT    := ext2fs com_err blkid pcre2-8 nettle sepol lz4 lzma zstd z
static_found    = $(filter /%,$(shell $(CC) -print-file-name=lib$(1).a))
static_have     = $(foreach l,$(STATIC_WANT),$(if $(call static_found,$(l)),$(l)))
static_missing  = $(filter-out $(static_have),$(STATIC_WANT))
ARCHIVES_LINK   = -Wl,-Bstatic $(static_have:%=-l%) -Wl,-Bdynamic $(static_missing:%=-l%) -lpthread
# fclabel links those archives it finds, the rest and libc as shared libraries: ld.so mapping
# and relocating eleven libraries was ~0.9 ms of every run's start (--version 1.9 -> 1.0 ms),
# which a relabel of a few files (~20 ms) pays as a full label does. SHARED_LIBS=1: all shared.
ifeq ($(SHARED_LIBS),1)
FCLABEL_LIBS = $(FC_LIBS) $(E2_LIBS) $(SEPOL_LIBS) $(EROFS_LIBS) -lpthread
else
FCLABEL_LIBS = $(ARCHIVES_LINK)
endif

FC_SRCS  := $(wildcard fcontexts/*.c)
FC_OBJS  := $(FC_SRCS:.c=.o)
IF_SRCS  := $(wildcard imgfmt/*.c)
IF_OBJS  := $(IF_SRCS:.c=.o)
AN_SRCS  := $(wildcard android/*.c)
AN_OBJS  := $(AN_SRCS:.c=.o)
LB_SRCS  := $(wildcard labeler/*.c labeler/*/*.c)
LB_OBJS  := $(LB_SRCS:.c=.o)
# the source lists, defined here once (mk/*.mk and the tests ask: make -s print-lib-srcs):
# everything but main's file, and every header
MAIN_SRC := labeler/cli/main.c
LIB_SRCS := $(FC_SRCS) $(IF_SRCS) $(AN_SRCS) $(filter-out $(MAIN_SRC),$(LB_SRCS))
HDRS     := $(wildcard fcontexts/*.h imgfmt/*.h android/*.h labeler/*.h labeler/*/*.h)
TEST_BINS := tests/oracle tests/fcunit tests/seappunit tests/engineunit tests/fcdigest tests/erofscat \
	tests/crcunit tests/nogetxattrat
# the benchmarks' own programs (bench/): make check builds none of them
BENCH_BINS := bench/fcbench bench/treefloor bench/timeit bench/relabelfloor

.PHONY: all deps print-lib-srcs print-cppflags print-static-libs check check-full demo bench bench-image bench-relabel bench-tree bench-data clean
all: fclabel

print-lib-srcs:
	@echo $(LIB_SRCS)

print-cppflags:
	@echo $(CPPFLAGS) $(PCRE_CFLAGS)

# the archives fclabel's link takes (none with SHARED_LIBS=1): t_symbols
print-static-libs:
	@$(if $(filter 1,$(SHARED_LIBS)),:,echo $(foreach l,$(static_have),$(call static_found,$(l))))

deps:
	@sh mk/deps.sh

fcontexts/libfcontexts.a: $(FC_OBJS)
	$(AR) rcs $@ $^

imgfmt/libimgfmt.a: $(IF_OBJS)
	$(AR) rcs $@ $^

# Android's rules; it uses fcontexts, so it comes before it on a link line
android/libandroid.a: $(AN_OBJS)
	$(AR) rcs $@ $^

fclabel: $(LB_OBJS) android/libandroid.a fcontexts/libfcontexts.a imgfmt/libimgfmt.a
	$(CC) $(LDFLAGS) -o $@ $(LB_OBJS) android/libandroid.a fcontexts/libfcontexts.a imgfmt/libimgfmt.a $(FCLABEL_LIBS)

# --version names the target the binary is for
labeler/cli/main.o: CPPFLAGS += -DFCLABEL_TARGET='"$(shell $(CC) -dumpmachine)"'

%.o: %.c $(HDRS)
	$(CC) $(CPPFLAGS) -DFCLABEL_VERSION='"$(VERSION)"' $(PCRE_CFLAGS) $(CFLAGS) $(WARN) -c -o $@ $<

tests/oracle: tests/oracle.c
	$(CC) $(CPPFLAGS) $(CFLAGS) $(WARN) -o $@ $< $(SEL_LIBS)

tests/fcunit: tests/fcunit.c tests/unit.h fcontexts/libfcontexts.a
	$(CC) $(CPPFLAGS) $(PCRE_CFLAGS) $(CFLAGS) $(WARN) -o $@ $< fcontexts/libfcontexts.a $(FC_LIBS) -lpthread

tests/fcdigest: tests/fcdigest.c fcontexts/libfcontexts.a
	$(CC) $(CPPFLAGS) $(PCRE_CFLAGS) $(CFLAGS) $(WARN) -o $@ $< fcontexts/libfcontexts.a $(FC_LIBS) -lpthread

tests/seappunit: tests/seappunit.c tests/unit.h android/libandroid.a fcontexts/libfcontexts.a
	$(CC) $(CPPFLAGS) $(PCRE_CFLAGS) $(CFLAGS) $(WARN) -o $@ $< android/libandroid.a \
		fcontexts/libfcontexts.a $(FC_LIBS) -lpthread

# ext4's crc32c as fclabel defines it (imgfmt/crc32c.c), on its own
tests/crcunit: tests/crcunit.c tests/unit.h imgfmt/crc32c.o
	$(CC) $(CPPFLAGS) $(CFLAGS) $(WARN) -o $@ $< imgfmt/crc32c.o -lpthread

# the engine through a fake target (tests/engineunit.c): its objects only, no image library
# (nor com_err: the engine names none of libext2fs)
EN_OBJS := $(filter labeler/engine/%.o,$(LB_OBJS))
tests/engineunit: tests/engineunit.c tests/unit.h $(EN_OBJS) android/libandroid.a fcontexts/libfcontexts.a
	$(CC) $(CPPFLAGS) $(PCRE_CFLAGS) $(CFLAGS) $(WARN) -o $@ $< $(EN_OBJS) android/libandroid.a \
		fcontexts/libfcontexts.a $(FC_LIBS) -lpthread

# the EROFS reader on its own (t_erofs): its objects and the engine's
ER_OBJS := $(filter labeler/erofs/%.o,$(LB_OBJS))
tests/erofscat: tests/erofscat.c $(ER_OBJS) $(EN_OBJS) android/libandroid.a fcontexts/libfcontexts.a
	$(CC) $(CPPFLAGS) $(PCRE_CFLAGS) $(CFLAGS) $(WARN) -o $@ $< $(ER_OBJS) $(EN_OBJS) \
		android/libandroid.a fcontexts/libfcontexts.a $(FC_LIBS) $(EROFS_LIBS) -lpthread

bench/fcbench: bench/fcbench.c fcontexts/libfcontexts.a
	$(CC) $(CPPFLAGS) $(PCRE_CFLAGS) $(CFLAGS) $(WARN) -o $@ $< fcontexts/libfcontexts.a $(FC_LIBS) $(SEL_LIBS) -ldl -lpthread

bench/treefloor: bench/treefloor.c
	$(CC) $(CPPFLAGS) $(CFLAGS) $(WARN) -o $@ $< -lpthread

bench/timeit: bench/timeit.c
	$(CC) $(CPPFLAGS) $(CFLAGS) $(WARN) -o $@ $<

bench/relabelfloor: bench/relabelfloor.c
	$(CC) $(CPPFLAGS) $(CFLAGS) $(WARN) -o $@ $< $(E2_LIBS)

# runs a command as on a kernel without getxattrat(2) (Linux < 6.13): t_nogetxattrat, bench-tree
tests/nogetxattrat: tests/nogetxattrat.c
	$(CC) $(CPPFLAGS) $(CFLAGS) $(WARN) -o $@ $<

# make check: every test once, against fclabel as built (minutes: before every commit);
# make check-full: every test again under AddressSanitizer/UBSan too (what CI runs)
check: deps
	@$(MAKE) --no-print-directory fclabel $(TEST_BINS)
	@sh tests/run.sh --no-sanitizers

check-full: deps
	@$(MAKE) --no-print-directory fclabel $(TEST_BINS)
	@FC_NO_SANITIZERS= sh tests/run.sh

# (what the demo needs only: no test tools, cross compilers or qemu)
demo:
	@sh mk/deps.sh demo
	@$(MAKE) -s --no-print-directory fclabel
	@sh tests/demo.sh

bench: deps
	@$(MAKE) --no-print-directory fclabel bench/fcbench
	@sh bench/bench.sh

bench-image: deps
	@$(MAKE) -s --no-print-directory fclabel
	@sh bench/bench_image.sh

bench-relabel: deps
	@$(MAKE) -s --no-print-directory fclabel bench/timeit bench/relabelfloor
	@sh bench/bench_relabel.sh

bench-tree: deps
	@$(MAKE) -s --no-print-directory fclabel bench/treefloor tests/nogetxattrat
	@sh bench/bench_tree.sh

bench-data: deps
	@$(MAKE) -s --no-print-directory fclabel
	@sh bench/bench_data.sh

include mk/fuzz.mk
# make static-arm64, make static-armhf: fclabel for a phone, cross-compiled, fully static
include mk/cross.mk
# make install / uninstall (PREFIX, DESTDIR, BINDIR, MANDIR, LIBDIR ...), make static
include mk/install.mk

clean:
	rm -f fclabel $(FC_OBJS) $(LB_OBJS) $(IF_OBJS) $(AN_OBJS) fcontexts/libfcontexts.a imgfmt/libimgfmt.a \
		android/libandroid.a $(TEST_BINS) $(BENCH_BINS)
	rm -rf tests/out
