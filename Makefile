# id3-meter: every target installs the Debian packages it needs when they are missing.
SHELL := /bin/bash
export PATH := $(PATH):/opt/swift/usr/bin

SWIFT ?= swift
SAMPLE_BUILD := .build-samples
APT_PACKAGES := libavformat-dev libavcodec-dev libavutil-dev zlib1g-dev pkg-config

.PHONY: all build sample-gen run test verify api-check api-baseline samples bench bench-fleet bench-soak bench-collector bench-report-fleet bench-audit fuzz docs deploy deps python ffmpeg chromium node promtool postgres tls-tools timeline-script library-docs screenshots clean install

all: build

# $(call apt,CHECK,PACKAGES): installs PACKAGES when the shell test CHECK fails, asking apt for
# its package lists first only when a package is not found.
apt = @$(1) || { \
  echo "Installing $(2)"; \
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q $(2) >/dev/null 2>&1 || \
  { apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q $(2) >/dev/null; }; }

deps:
	$(call apt,pkg-config --exists libavformat libavcodec libavutil zlib 2>/dev/null,$(APT_PACKAGES))

# The scripts the tests run, and the validator the record schema is checked with.
python:
	$(call apt,/usr/bin/python3 -c 'import jsonschema' 2>/dev/null,python3 python3-jsonschema)

ffmpeg:
	$(call apt,command -v ffmpeg >/dev/null,ffmpeg)

# The tests draw the HTML report and the live page in a real headless browser.
chromium:
	$(call apt,command -v chromium >/dev/null,chromium)

# The tests evaluate the shipped alerting rules with Prometheus's own engine (`promtool test rules`).
promtool:
	$(call apt,command -v promtool >/dev/null,--no-install-recommends prometheus)

# The tests check the timeline page's script with node (`node --check`, a syntax lint).
node:
	$(call apt,command -v node >/dev/null,nodejs)

# `collect`'s and `report`'s tests keep records in a real PostgreSQL server too: a private one
# the suite starts when it first needs it (scripts/postgres-test-db.sh), stopped after the suite.
postgres:
	$(call apt,ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1,postgresql)

# The API's TLS tests make a certificate with openssl and ask through curl; the private-origin
# tests make their CA and certificates with python3-cryptography (scripts/tls_test_servers.py).
tls-tools:
	$(call apt,command -v openssl >/dev/null && command -v curl >/dev/null,openssl curl)
	$(call apt,/usr/bin/python3 -c 'import cryptography' 2>/dev/null,python3-cryptography)

# After editing docs/LIBRARY.md: its Swift blocks as the programs the build compiles.
library-docs:
	python3 scripts/library-docs-examples.py

# After editing Sources/ID3MeterReport/HTML/timeline.js: the Swift string the binary carries.
timeline-script:
	scripts/embed-timeline-script.sh

# What SwiftPM says of its progress, not worth a person's reading.
BUILD_NOISE := ^(Fetching|Fetched|Computing|Computed|Creating working copy|Working copy|Cloning|Cloned|Building for|\[[0-9]+/[0-9]+\])

# The optimised binary, and only it (the sample generator and the fuzz target have targets of their own).
build: deps
	@$(SWIFT) build -c release --product id3-meter 2>&1 | grep -v -E "$(BUILD_NOISE)" || true
	@test -x .build/release/id3-meter

# The optimised sample generator, which makes the benchmarks' corpora.
sample-gen: deps
	@$(SWIFT) build -c release --product id3-sample-gen 2>&1 | grep -v -E "$(BUILD_NOISE)" || true

# The binary, its man page (swift-argument-parser's generate-manual) and shell completions, below
# PREFIX (DESTDIR for staging).
PREFIX ?= /usr/local
install: build
	@$(SWIFT) build -c release --product generate-manual >/dev/null
	@mkdir -p .build/man && .build/release/generate-manual .build/release/id3-meter --output-directory .build/man >/dev/null
	@sed -i "s/^$$/.Pp/" .build/man/id3-meter.1   # mdoc wants a paragraph macro, not an empty line
	install -D -m 755 .build/release/id3-meter $(DESTDIR)$(PREFIX)/bin/id3-meter
	install -D -m 644 .build/man/id3-meter.1 $(DESTDIR)$(PREFIX)/share/man/man1/id3-meter.1
	@mkdir -p $(DESTDIR)$(PREFIX)/share/bash-completion/completions $(DESTDIR)$(PREFIX)/share/zsh/site-functions \
	  $(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d
	.build/release/id3-meter --generate-completion-script bash > $(DESTDIR)$(PREFIX)/share/bash-completion/completions/id3-meter
	.build/release/id3-meter --generate-completion-script zsh > $(DESTDIR)$(PREFIX)/share/zsh/site-functions/_id3-meter
	.build/release/id3-meter --generate-completion-script fish > $(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d/id3-meter.fish
	@echo "installed $$($(DESTDIR)$(PREFIX)/bin/id3-meter --version) in $(DESTDIR)$(PREFIX)/bin (man id3-meter; completions for bash, zsh, fish)"

# Meters the bundled HLS sample in real time (about 35 s), printing each sendID3 as it is made.
# A debug build of the one product it runs, without the PostgreSQL trait (postgres-nio and
# swift-crypto's BoringSSL are a third of a build from nothing): a real-time meter of one stream
# needs neither the optimiser nor PostgreSQL. `make test` goes on from its dependencies; `make
# build` makes the optimised binary with everything.
run: deps
	@$(SWIFT) build --product id3-meter --traits Service 2>&1 | grep -v -E "$(BUILD_NOISE)" || true
	.build/debug/id3-meter --format text samples/hls/master.m3u8

# The suite, then a cross-check of every sample against an independent reader, then the library's
# API against the last release's. One debug build serves `make run` and the suite; a warning from
# our own sources (Sources/, Tests/, Examples/) fails it, third parties' are theirs. The suite runs
# in shards (Tests/shards, scripts/test-suite.sh): processes of their own, each test alone in
# its shard, so that the live tests keep real time beside the CPU-bound ones. The full output goes
# to $(TEST_LOG); what is printed is each shard's summary and what failed.
TEST_LOG := .build/test.log
# The suite takes about 8 minutes here; past TEST_BUDGET a hung test is named and the run stopped.
TEST_BUDGET ?= 30m
test: deps python chromium node tls-tools promtool postgres
	@mkdir -p .build && echo "Building and testing (the whole output: $(TEST_LOG))"
	@$(SWIFT) build --build-tests > $(TEST_LOG) 2>&1 || { grep -E "error:" $(TEST_LOG) | sort -u | head -40; exit 1; }
	@! grep -E "^$(CURDIR)/(Sources|Tests|Examples)/.*: warning:" $(TEST_LOG) | sort -u | grep . || \
	  { echo "warnings from our own sources (above): make them go"; exit 1; }
	@trap 'scripts/postgres-test-db.sh stop' EXIT; ID3METER_TEST_POSTGRES=start scripts/test-suite.sh $(TEST_LOG) $(TEST_BUDGET)
	scripts/verify.sh
	python3 scripts/api-check.py

# The library's public API against the last release's (api/baseline; scripts/api-check.py).
api-check: deps python
	@$(SWIFT) build --target ID3Meter 2>&1 | grep -v -E "$(BUILD_NOISE)" || true
	python3 scripts/api-check.py

# After a release: name it in api/baseline ("VERSION COMMIT"), then keep its API's digests in api/VERSION/.
api-baseline: deps python
	python3 scripts/api-check.py --regenerate

# The README's screenshots, taken by the browser tests of the code as it is.
screenshots: deps chromium
	@mkdir -p docs/images
	ID3METER_SCREENSHOTS=$(CURDIR)/docs/images $(SWIFT) test --no-parallel --disable-xctest --filter "HTMLReportTests|LivePageTests|thePageShowsTheWorstFirst" 2>&1 | grep -a -E "^✘|^✔ Test run|error:"
	@ls -l docs/images

verify: deps python
	$(SWIFT) build
	scripts/verify.sh

# Base audio/video (TS and fMP4 HLS) from the ffmpeg CLI; the ID3 streams from id3-sample-gen (libavformat's muxer
# and an independent TS writer), each sample beside the list of tags written into it.
samples: deps ffmpeg python
	mkdir -p $(SAMPLE_BUILD)
	for seconds in 40 20 2; do \
	  ffmpeg -nostdin -loglevel error -y -f lavfi -i "testsrc=size=160x90:rate=30000/1001" \
	    -f lavfi -i "sine=frequency=1000:sample_rate=48000" -t $$seconds \
	    -c:v mpeg2video -qscale:v 31 -g 60 -c:a aac -b:a 16k -ac 1 -f mpegts $(SAMPLE_BUILD)/base$$seconds.ts; \
	done
	for pair in adts:aac mp3:libmp3lame ac3:ac3 eac3:eac3; do format=$${pair%%:*}; codec=$${pair##*:}; \
	  ffmpeg -nostdin -loglevel error -y -f lavfi -i "sine=frequency=500:sample_rate=48000" -t 6 -ac 1 \
	    -c:a $$codec -b:a 64k -f $$format $(SAMPLE_BUILD)/tone.$$format; \
	  ffprobe -v error -select_streams a -show_entries packet=pts,size,pos -of csv=p=0 \
	    $(SAMPLE_BUILD)/tone.$$format > $(SAMPLE_BUILD)/tone.$$format.csv; \
	  ffprobe -v error -select_streams a -show_entries stream=time_base -of csv=p=0 \
	    $(SAMPLE_BUILD)/tone.$$format > $(SAMPLE_BUILD)/tone.$$format.tb; \
	done
	rm -rf $(SAMPLE_BUILD)/fmp4 && mkdir -p $(SAMPLE_BUILD)/fmp4
	ffmpeg -nostdin -loglevel error -y -f lavfi -i "testsrc=size=160x90:rate=30000/1001" \
	  -f lavfi -i "sine=frequency=1000:sample_rate=48000" -t 14 -c:v mpeg2video -qscale:v 31 -g 60 -bf 0 \
	  -c:a aac -b:a 16k -ac 1 -f hls -hls_segment_type fmp4 -hls_time 6 -hls_playlist_type vod \
	  -hls_fmp4_init_filename init.mp4 -hls_segment_filename $(SAMPLE_BUILD)/fmp4/seg%d.m4s $(SAMPLE_BUILD)/fmp4/index.m3u8
	ffprobe -v error -show_entries stream=time_base -of csv=p=0 $(SAMPLE_BUILD)/fmp4/init.mp4 > $(SAMPLE_BUILD)/fmp4/init.tb
	for segment in $(SAMPLE_BUILD)/fmp4/seg*.m4s; do \
	  cat $(SAMPLE_BUILD)/fmp4/init.mp4 $$segment | ffprobe -v error -ignore_editlist 1 \
	    -show_entries packet=stream_index,dts -of csv=p=0 -i - | awk -F, '!seen[$$1]++' > $${segment%.m4s}.csv; \
	done
	rm -rf samples/ts samples/hls samples/spec samples/qa samples/packed samples/quirks samples/fmp4 samples/renditions samples/byterange samples/lenient
	$(SWIFT) run id3-sample-gen write --output samples --long-base $(SAMPLE_BUILD)/base40.ts --short-base $(SAMPLE_BUILD)/base20.ts \
	  --audio $(SAMPLE_BUILD) --fmp4 $(SAMPLE_BUILD)/fmp4
	cp $(SAMPLE_BUILD)/base2.ts samples/ts/no-id3.ts
	python3 scripts/byterange_samples.py samples
	python3 -c 'import mutagen' 2>/dev/null || python3 -m pip install -q mutagen
	python3 scripts/lenient_samples.py samples
	python3 scripts/validator_samples.py samples/validator
	$(call apt,python3 -c 'import cryptography' 2>/dev/null,python3-cryptography)
	rm -rf samples/protected && python3 scripts/protected_samples.py samples/protected
	rm -rf samples/mpts && python3 scripts/mpts_samples.py samples/mpts
	rm -rf samples/dash && python3 scripts/dash_samples.py samples/dash
	python3 scripts/ladder_samples.py samples
	@du -sh samples

bench: build sample-gen ffmpeg python chromium
	scripts/bench.sh
	scripts/bench-live.sh
	scripts/bench-report.sh
	scripts/bench-coverage.sh

# serve with 100, 500 and 1000 synthetic live channels for 2 minutes each (BENCH_FLEET_SIZES, BENCH_FLEET_SECONDS).
# The collector under a fleet's posters (SQLite and PostgreSQL), against each database's own write speed.
bench-collector: build python postgres
	scripts/bench-collector.py

# The report over a fleet's month on PostgreSQL (10,000 channels x 30 days, BENCH_REPORT_CHANNELS and
# BENCH_REPORT_DAYS), after a check that the folded hours give the minutes' report. About 5 minutes, 3 GB of disk.
bench-report-fleet: build python postgres
	scripts/bench-report-fleet.sh

bench-audit: build sample-gen python
	scripts/bench-audit.sh

bench-fleet: build sample-gen python
	@command -v curl >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y -q curl >/dev/null
	scripts/bench-fleet.sh

# A line-up metered for an hour and a quarter (BENCH_SOAK_MINUTES), its memory as its windows fill.
bench-soak: build sample-gen python
	scripts/bench-soak.sh

# The Kubernetes PrometheusRule, from deploy/prometheus/id3-meter-rules.yaml (the rules are written once).
# The image: docker build -f deploy/Dockerfile -t id3-meter:VERSION . (deploy/README.md).
deploy:
	scripts/kubernetes-rules.sh

# libFuzzer on each parser for FUZZ_SECONDS (default 600), two at a time (FUZZ_TARGETS picks some). Findings land in
# fuzz/findings/; once fixed, move them to fuzz/regressions/TARGET/, which the tests replay.
FUZZ_SECONDS ?= 600
FUZZ_TARGETS ?= id3 nielsen playlist reference steering packed emsg ts segments mpd options cookies inflate assetlist records hours
FUZZ_BUILD := .build-fuzz
fuzz: deps
	$(SWIFT) build -c release --scratch-path $(FUZZ_BUILD) --product id3-meter-fuzz \
	  -Xswiftc -sanitize=fuzzer,address -Xswiftc -DFUZZING -Xcc -fsanitize=fuzzer-no-link,address \
	  -Xswiftc -Xclang-linker -Xswiftc -fuse-ld=lld
	rm -rf $(FUZZ_BUILD)/seeds && $(SWIFT) run id3-sample-gen seeds --output $(FUZZ_BUILD)/seeds
	mkdir -p fuzz/findings
	for target in $(FUZZ_TARGETS); do mkdir -p $(FUZZ_BUILD)/corpus/$$target; done
	printf '%s\n' $(FUZZ_TARGETS) | xargs -P 2 -I{} sh -c 'FUZZ_TARGET={} $(FUZZ_BUILD)/release/id3-meter-fuzz \
	  $(FUZZ_BUILD)/corpus/{} $(FUZZ_BUILD)/seeds/{} -max_total_time=$(FUZZ_SECONDS) -max_len=8192 \
	  -artifact_prefix=fuzz/findings/{}- -print_final_stats=1 > $(FUZZ_BUILD)/{}.log 2>&1; \
	  echo "{}: exit $$?, $$(grep -h -E "stat::number_of_executed_units|cov:" $(FUZZ_BUILD)/{}.log | tail -2 | tr "\n" " ")"'
	@ls fuzz/findings | grep . && { echo "findings in fuzz/findings"; exit 1; } || echo "no findings"

# DocC for the two library products, in .build-docs/MODULE.doccarchive, with how much of each
# public surface has a summary (docc's coverage; its build flags get a build folder of their own).
DOCS_BUILD := .build-docs
docs: deps
	$(SWIFT) build --scratch-path $(DOCS_BUILD) --target ID3Meter \
	  -Xswiftc -emit-symbol-graph -Xswiftc -emit-symbol-graph-dir -Xswiftc $(CURDIR)/$(DOCS_BUILD)/symbol-graphs
	for module in ID3MeterCore ID3Meter; do \
	  rm -rf $(DOCS_BUILD)/graphs-$$module $(DOCS_BUILD)/$$module.docc && mkdir -p $(DOCS_BUILD)/graphs-$$module $(DOCS_BUILD)/$$module.docc; \
	  cp $(DOCS_BUILD)/symbol-graphs/$$module.symbols.json $(DOCS_BUILD)/symbol-graphs/$$module@*.symbols.json $(DOCS_BUILD)/graphs-$$module/; \
	  echo "$$module:"; \
	  docc convert $(DOCS_BUILD)/$$module.docc --additional-symbol-graph-dir $(DOCS_BUILD)/graphs-$$module \
	    --fallback-display-name $$module --fallback-bundle-identifier id3meter.$$module \
	    --output-path $(DOCS_BUILD)/$$module.doccarchive --experimental-documentation-coverage \
	    --coverage-summary-level brief 2>&1 | grep -E "^(Types|Members|Globals|  +\|)" ; \
	done

clean:
	rm -rf .build $(SAMPLE_BUILD)
