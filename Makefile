# id3-meter: every target installs the Debian packages it needs when they are missing.
SHELL := /bin/bash
export PATH := $(PATH):/opt/swift/usr/bin

SWIFT ?= swift
SAMPLE_BUILD := .build-samples
APT_PACKAGES := libavformat-dev libavcodec-dev libavutil-dev pkg-config

.PHONY: all build run test verify samples bench deps python ffmpeg clean

all: build

deps:
	@pkg-config --exists libavformat libavcodec libavutil 2>/dev/null || { \
	  echo "Installing $(APT_PACKAGES)"; \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y -q $(APT_PACKAGES) >/dev/null 2>&1 || \
	  { apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q $(APT_PACKAGES) >/dev/null; }; }

python:
	@command -v python3 >/dev/null || { \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y -q python3 >/dev/null 2>&1 || \
	  { apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q python3 >/dev/null; }; }

ffmpeg:
	@command -v ffmpeg >/dev/null || { \
	  echo "Installing ffmpeg"; \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y -q ffmpeg >/dev/null 2>&1 || \
	  { apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q ffmpeg >/dev/null; }; }

build: deps
	$(SWIFT) build -c release

# Meters the bundled HLS sample in real time (about 35 s), printing each sendID3 as it is made.
run: build
	.build/release/id3-meter --format text samples/hls/master.m3u8

# The suite, then a cross-check of every sample against an independent reader.
test: deps python
	$(SWIFT) build
	$(SWIFT) test
	scripts/verify.sh

verify: deps python
	$(SWIFT) build
	scripts/verify.sh

# Base audio/video from the ffmpeg CLI; the ID3 streams from id3-sample-gen (libavformat's muxer
# and an independent TS writer), each sample beside the list of tags written into it.
samples: deps ffmpeg
	mkdir -p $(SAMPLE_BUILD)
	for seconds in 40 20 2; do \
	  ffmpeg -nostdin -loglevel error -y -f lavfi -i "testsrc=size=160x90:rate=30000/1001" \
	    -f lavfi -i "sine=frequency=1000:sample_rate=48000" -t $$seconds \
	    -c:v mpeg2video -qscale:v 31 -g 60 -c:a aac -b:a 16k -ac 1 -f mpegts $(SAMPLE_BUILD)/base$$seconds.ts; \
	done
	rm -rf samples/ts samples/hls samples/spec samples/qa
	$(SWIFT) run id3-sample-gen write --output samples --long-base $(SAMPLE_BUILD)/base40.ts --short-base $(SAMPLE_BUILD)/base20.ts
	cp $(SAMPLE_BUILD)/base2.ts samples/ts/no-id3.ts
	@du -sh samples

bench: build ffmpeg python
	scripts/bench.sh
	scripts/bench-live.sh

clean:
	rm -rf .build $(SAMPLE_BUILD)
