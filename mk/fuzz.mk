# libFuzzer harnesses (tests/fuzz/, see tests/fuzz/README). Included by the Makefile.
# make fuzz            build them with clang and run each for FUZZ_SECONDS (default 60)
# make fuzz-build      only build them (into tests/out/fuzz/build)
# make fuzz FUZZ_HARNESSES=fuzz_parse FUZZ_SECONDS=600

FUZZ_CC        ?= clang
FUZZ_SECONDS   ?= 60
FUZZ_BUILD     := tests/out/fuzz/build
FUZZ_HARNESSES ?= fuzz_parse fuzz_lookup_diff fuzz_image fuzz_sparse fuzz_seapp fuzz_erofs
FUZZ_SAN       := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
FUZZ_CFLAGS    ?= -O1 -g
# the library sources, built apart from the normal objects (MAIN_SRC has main)
FUZZ_LIB_SRCS  := $(LIB_SRCS)
FUZZ_LIB_OBJS  := $(addprefix $(FUZZ_BUILD)/obj/,$(FUZZ_LIB_SRCS:.c=.o))
FUZZ_LIB       := $(FUZZ_BUILD)/libfclabel-fuzz.a
FUZZ_BINS      := $(addprefix $(FUZZ_BUILD)/,$(FUZZ_HARNESSES))

.PHONY: fuzz fuzz-build

fuzz:
	@sh mk/deps.sh fuzz
	@$(MAKE) --no-print-directory fuzz-build
	@FUZZ_SECONDS=$(FUZZ_SECONDS) FUZZ_BUILD=$(FUZZ_BUILD) sh tests/fuzz.sh $(FUZZ_HARNESSES)

fuzz-build: $(FUZZ_BINS)

$(FUZZ_BUILD)/obj/%.o: %.c $(HDRS)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(CPPFLAGS) -Ilabeler $(PCRE_CFLAGS) $(FUZZ_CFLAGS) $(FUZZ_SAN) \
		-fsanitize=fuzzer-no-link -c -o $@ $<

$(FUZZ_LIB): $(FUZZ_LIB_OBJS)
	@rm -f $@
	$(AR) rcs $@ $^

$(FUZZ_BUILD)/fuzz_lookup_diff: FUZZ_EXTRA_LIBS = $(SEL_LIBS)
$(FUZZ_BUILD)/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzzutil.c $(FUZZ_LIB) \
		$(HDRS)
	$(FUZZ_CC) $(CPPFLAGS) -Ilabeler $(PCRE_CFLAGS) $(FUZZ_CFLAGS) $(FUZZ_SAN) -fsanitize=fuzzer \
		-o $@ $< $(FUZZ_LIB) $(FUZZ_EXTRA_LIBS) $(FC_LIBS) $(E2_LIBS) $(SEPOL_LIBS) $(EROFS_LIBS) -lpthread
