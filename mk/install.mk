# make install, make uninstall and make static. Included by the Makefile.
#
# make install [PREFIX=/usr/local] [DESTDIR=] [BINDIR=] [DATADIR=] [MANDIR=] [LIBDIR=]
#              [INCLUDEDIR=] [PKGCONFIGDIR=] [BASHCOMPDIR=]
#     fclabel, the man pages (sections 1, 3 and 5, plus fc_load(3) ... pointing to fcontexts(3)),
#     the report's JSON Schema (DATADIR/fclabel/fclabel-report.schema.json),
#     libfcontexts.a, fcontexts.h, fcontexts.pc (generated), the bash completion
# make uninstall      removes what make install put there (same variables)
# make static         fclabel-static, for a recovery ramdisk: every library that has a static
#                     archive here linked in (all of them, libc included, on Debian 12), the
#                     others dynamically; `fclabel-static --version` says which is which.
#                     Built apart from the normal objects, in build/static (STATIC_CFLAGS).

PREFIX       ?= /usr/local
BINDIR       ?= $(PREFIX)/bin
DATADIR      ?= $(PREFIX)/share
MANDIR       ?= $(DATADIR)/man
LIBDIR       ?= $(PREFIX)/lib
INCLUDEDIR   ?= $(PREFIX)/include
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
BASHCOMPDIR  ?= $(DATADIR)/bash-completion/completions
INSTALL      ?= install

MAN1_PAGES := $(notdir $(wildcard man/*.1))
MAN3_PAGES := $(notdir $(wildcard man/*.3))
MAN5_PAGES := $(notdir $(wildcard man/*.5))
# one-line pages so that `man fc_lookup` finds fcontexts(3)
MAN3_LINKS := fc_load fc_load_opts fc_free fc_lookup fc_count fc_spec_at fc_explain \
	fc_spec_prefix fc_diff fc_diff_free fc_diff_count fc_diff_at fc_diff_everything \
	fc_diff_reaches

.PHONY: install uninstall static clean-static

install: fclabel fcontexts/libfcontexts.a
	$(INSTALL) -d "$(DESTDIR)$(BINDIR)" "$(DESTDIR)$(MANDIR)/man1" "$(DESTDIR)$(MANDIR)/man3" \
		"$(DESTDIR)$(MANDIR)/man5" "$(DESTDIR)$(DATADIR)/fclabel" \
		"$(DESTDIR)$(LIBDIR)" "$(DESTDIR)$(INCLUDEDIR)" "$(DESTDIR)$(PKGCONFIGDIR)" \
		"$(DESTDIR)$(BASHCOMPDIR)"
	$(INSTALL) -m 755 fclabel "$(DESTDIR)$(BINDIR)/fclabel"
	cd man && $(INSTALL) -m 644 $(MAN1_PAGES) "$(DESTDIR)$(MANDIR)/man1/"
	cd man && $(INSTALL) -m 644 $(MAN3_PAGES) "$(DESTDIR)$(MANDIR)/man3/"
	cd man && $(INSTALL) -m 644 $(MAN5_PAGES) "$(DESTDIR)$(MANDIR)/man5/"
	$(INSTALL) -m 644 man/fclabel-report.schema.json "$(DESTDIR)$(DATADIR)/fclabel/"
	for f in $(MAN3_LINKS); do \
		printf '.so man3/fcontexts.3\n' >"$(DESTDIR)$(MANDIR)/man3/$$f.3" || exit 1; \
		chmod 644 "$(DESTDIR)$(MANDIR)/man3/$$f.3"; \
	done
	$(INSTALL) -m 644 fcontexts/libfcontexts.a "$(DESTDIR)$(LIBDIR)/libfcontexts.a"
	$(INSTALL) -m 644 fcontexts/fcontexts.h "$(DESTDIR)$(INCLUDEDIR)/fcontexts.h"
	sed -e '/^#/d' -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@LIBDIR@|$(LIBDIR)|g' \
		-e 's|@INCLUDEDIR@|$(INCLUDEDIR)|g' -e 's|@VERSION@|$(VERSION)|g' \
		fcontexts/fcontexts.pc.in >"$(DESTDIR)$(PKGCONFIGDIR)/fcontexts.pc"
	chmod 644 "$(DESTDIR)$(PKGCONFIGDIR)/fcontexts.pc"
	$(INSTALL) -m 644 completions/fclabel.bash "$(DESTDIR)$(BASHCOMPDIR)/fclabel"

uninstall:
	rm -f "$(DESTDIR)$(BINDIR)/fclabel" "$(DESTDIR)$(LIBDIR)/libfcontexts.a" \
		"$(DESTDIR)$(INCLUDEDIR)/fcontexts.h" "$(DESTDIR)$(PKGCONFIGDIR)/fcontexts.pc" \
		"$(DESTDIR)$(BASHCOMPDIR)/fclabel"
	for f in $(MAN1_PAGES); do rm -f "$(DESTDIR)$(MANDIR)/man1/$$f"; done
	for f in $(MAN5_PAGES); do rm -f "$(DESTDIR)$(MANDIR)/man5/$$f"; done
	rm -f "$(DESTDIR)$(DATADIR)/fclabel/fclabel-report.schema.json"
	-rmdir "$(DESTDIR)$(DATADIR)/fclabel" 2>/dev/null
	for f in $(MAN3_PAGES) $(MAN3_LINKS:=.3); do rm -f "$(DESTDIR)$(MANDIR)/man3/$$f"; done

# ---- make static ----
STATIC_DIR     := build/static
STATIC_CFLAGS  ?= -O2
STATIC_LDFLAGS ?=
STATIC_OBJS    := $(addprefix $(STATIC_DIR)/,$(FC_SRCS:.c=.o) $(IF_SRCS:.c=.o) $(AN_SRCS:.c=.o) \
	$(LB_SRCS:.c=.o))
# (STATIC_WANT, static_found, static_have, static_missing, ARCHIVES_LINK: the Makefile's)
static_full     = $(if $(static_missing),,$(call static_found,c))
STATIC_LINK     = $(if $(static_full),-static $(STATIC_WANT:%=-l%) -lpthread,$(ARCHIVES_LINK))
STATIC_NAMES    = $(strip $(static_have:%=lib%) $(if $(static_full),libc))
SHARED_NAMES    = $(strip $(static_missing:%=lib%) $(if $(static_full),,libc))

static: fclabel-static
	@./fclabel-static --version | sed -n 's/^linked/fclabel-static: linked/p'

fclabel-static: $(STATIC_OBJS)
	$(CC) $(STATIC_LDFLAGS) -o $@ $(STATIC_OBJS) $(STATIC_LINK)

# what is static is compiled into --version: rebuilt when that changes
$(STATIC_DIR)/linkinfo: fclabel-static-force
	@mkdir -p $(@D)
	@printf 'static: %s\nshared: %s\n' "$(STATIC_NAMES)" "$(SHARED_NAMES)" >$@.new
	@if cmp -s $@.new $@; then rm -f $@.new; else mv $@.new $@; fi
.PHONY: fclabel-static-force
fclabel-static-force:

$(STATIC_DIR)/$(MAIN_SRC:.c=.o): $(STATIC_DIR)/linkinfo
$(STATIC_DIR)/$(MAIN_SRC:.c=.o): STATIC_DEFS = -DFCLABEL_TARGET='"$(shell $(CC) -dumpmachine)"' \
	-DFCLABEL_STATIC_LIBS='"$(shell sed -n 's/^static: //p' $(STATIC_DIR)/linkinfo)"' \
	-DFCLABEL_SHARED_LIBS='"$(shell sed -n 's/^shared: //p' $(STATIC_DIR)/linkinfo)"'

$(STATIC_DIR)/%.o: %.c $(HDRS)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -DFCLABEL_VERSION='"$(VERSION)"' $(STATIC_DEFS) $(PCRE_CFLAGS) \
		$(STATIC_CFLAGS) $(WARN) -c -o $@ $<

clean: clean-static
clean-static:
	rm -rf $(STATIC_DIR) fclabel-static
