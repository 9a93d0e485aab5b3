# make static-arm64, make static-armhf: a fully static fclabel for a phone's recovery (64-bit,
# and 32-bit ARMv7 recoveries), cross-compiled with Debian's cross compilers against the target's
# own static archives (libext2fs, libcom_err, libpcre2-8 with its JIT, libnettle, libsepol, liblz4, liblzma, libzstd, libz,
# glibc). Included by the Makefile.
#
# fclabel-ARCH     the binary, stripped (build/ARCH/fclabel keeps the symbols)
# build/ARCH/      its objects;  build/sysroot-ARCH/  the target's libraries and headers, fetched
#                  and unpacked by mk/cross.sh (apt-get download, dpkg-deb -x; nothing of the target
#                  is installed), again only when the host's versions of them change
# CROSS_CC_ARCH, CROSS_STRIP_ARCH   the tools (default TRIPLE-gcc, TRIPLE-strip)
# CROSS_CFLAGS, CROSS_LDFLAGS       (-O2; none)
#
# The compilers come with `make deps` (mk/cross.sh tools, as root). `fclabel-ARCH --version`
# names the target; tests/t_cross.sh runs the binaries under qemu-user.

CROSS_ARCHS        := arm64 armhf
CROSS_TRIPLE_arm64 := aarch64-linux-gnu
CROSS_TRIPLE_armhf := arm-linux-gnueabihf
CROSS_CFLAGS       ?= -O2
CROSS_LDFLAGS      ?=
CROSS_LIBS         := ext2fs com_err blkid pcre2-8 nettle sepol lz4 lzma zstd z
CROSS_SRCS         := $(FC_SRCS) $(IF_SRCS) $(AN_SRCS) $(LB_SRCS)
CROSS_HDRS         := $(HDRS)

.PHONY: $(CROSS_ARCHS:%=static-%) clean-cross cross-force

# cross_rules ARCH
define cross_rules
CROSS_CC_$(1)    ?= $$(CROSS_TRIPLE_$(1))-gcc
CROSS_STRIP_$(1) ?= $$(CROSS_TRIPLE_$(1))-strip
CROSS_OBJS_$(1)  := $$(addprefix build/$(1)/,$$(CROSS_SRCS:.c=.o))

static-$(1): fclabel-$(1)
	@echo "fclabel-$(1): $$$$(wc -c <fclabel-$(1)) bytes (stripped), static, for $$(CROSS_TRIPLE_$(1))"

fclabel-$(1): build/$(1)/fclabel
	$$(CROSS_STRIP_$(1)) -o $$@ $$<

build/$(1)/fclabel: $$(CROSS_OBJS_$(1))
	$$(CROSS_CC_$(1)) -static $$(CROSS_LDFLAGS) -o $$@ $$(CROSS_OBJS_$(1)) \
		-Lbuild/sysroot-$(1)/usr/lib/$$(CROSS_TRIPLE_$(1)) $$(CROSS_LIBS:%=-l%) -lpthread

# checked on every build (quickly); replaced, and the objects rebuilt, only when it changes
build/sysroot-$(1)/.stamp: cross-force
	@command -v $$(CROSS_CC_$(1)) >/dev/null || { echo "make static-$(1): $$(CROSS_CC_$(1)) is \
	not installed: run make deps as root (apt-get install gcc-$$(CROSS_TRIPLE_$(1)) \
	libc6-dev-$(1)-cross)" >&2; exit 1; }
	@sh mk/cross.sh sysroot $(1) build/sysroot-$(1)

build/$(1)/$(MAIN_SRC:.c=.o): CROSS_DEFS = -DFCLABEL_TARGET='"$$(CROSS_TRIPLE_$(1))"' \
	-DFCLABEL_STATIC_LIBS='"$$(CROSS_LIBS:%=lib%) libc"' -DFCLABEL_SHARED_LIBS='""'

build/$(1)/%.o: %.c $$(CROSS_HDRS) build/sysroot-$(1)/.stamp
	@mkdir -p $$(@D)
	$$(CROSS_CC_$(1)) $$(CPPFLAGS) -D_FILE_OFFSET_BITS=64 -isystem build/sysroot-$(1)/usr/include \
		-DFCLABEL_VERSION='"$$(VERSION)"' $$(CROSS_DEFS) $$(CROSS_CFLAGS) $$(WARN) -c -o $$@ $$<
endef
$(foreach a,$(CROSS_ARCHS),$(eval $(call cross_rules,$(a))))

cross-force:

clean: clean-cross
clean-cross:
	rm -rf $(CROSS_ARCHS:%=build/%) $(CROSS_ARCHS:%=fclabel-%)
