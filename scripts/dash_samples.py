#!/usr/bin/env python3
"""MPEG-DASH samples with Nielsen tags, and the ground truth. The media and most MPDs come from
the ffmpeg CLI's `dash` muxer; this script puts the tags in (emsg boxes before a segment's
fragment, or an MPD EventStream) and edits the MPD only where a sample needs it:

  FOLDER/timeline/   SegmentTemplate + SegmentTimeline, $Number%05d$ names. Audio segments carry
                     emsg v1 tags of the Nielsen (value 1), AOM and Apple schemes, and one emsg of
                     SCTE-35's scheme that must be left alone; the audio AdaptationSet declares
                     the Nielsen InbandEventStream.
  FOLDER/time/       SegmentTemplate + SegmentTimeline, $Time$ names; emsg v1 (Nielsen) and v0
                     (AOM) tags ride in the video segments and nothing declares them (a reader
                     must find them by reading).
  FOLDER/number/     SegmentTemplate with @duration (no timeline), $Number$ names.
  FOLDER/events/     untagged segments; the tags are an MPD EventStream of base64 ID3 events
                     (one event repeated with the same id, which must count once).
  FOLDER/periods/    two Periods (PT0S and PT8S), each its own ffmpeg output and BaseURL, tagged.
  FOLDER/repeats/    two Periods of video; every emsg is repeated in the next segment (across the
                     Period boundary too), as packagers repeat an event in each segment it spans:
                     v0 (AOM) in the first Period, the copy timed from its own segment's start;
                     v1 (Nielsen) in the second. Each tag counts once.
  FOLDER/indexed/    one file per Representation: SegmentBase with indexRange (ffmpeg's global
                     sidx), Initialization range, tags in emsg v1 before each fragment.
  FOLDER/template-index/ the indexed sample's file named by SegmentTemplate@index (the resource
                     holding the sidx and the media it indexes), its movie header by @initialization.
  FOLDER/protected/  the timeline sample's segments, its MPD with ContentProtection (cenc,
                     Widevine, PlayReady): no licence is ever to be fetched.
  FOLDER/truth.json  for each MPD: every planted tag (pts in 90 kHz, owner, scheme).

Times: emsg v1 at presentation_time / timescale; v0 at the segment's start (the MPD's S@t, which
this script checks against the fragment's tfdt) plus the delta; EventStream events at
(presentationTime - presentationTimeOffset) / timescale from the Period's start. All chosen to be
exact in 90 kHz ticks. Shares no code with id3-meter (tags from validator_samples.py).
Usage: dash_samples.py FOLDER"""
import base64, json, os, shutil, struct, subprocess, sys, tempfile
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.dirname(__file__))
from validator_samples import id3, owner  # noqa: E402

NS = "urn:mpeg:dash:schema:mpd:2011"
ET.register_namespace("", NS)
ET.register_namespace("xsi", "http://www.w3.org/2001/XMLSchema-instance")
ET.register_namespace("xlink", "http://www.w3.org/1999/xlink")
NIELSEN = "www.nielsen.com:id3:v1"
AOM = "https://aomedia.org/emsg/ID3"
APPLE = "https://developer.apple.com/streaming/emsg-id3"
SCTE = "urn:scte:scte35:2013:bin"
SECONDS = 12
SEGMENT = 4


def q(name):
    return "{%s}%s" % (NS, name)


def box(kind, body):
    return struct.pack(">I", 8 + len(body)) + kind + body


def emsg_v1(timescale, time, scheme, value, event_id, data):
    body = bytes([1, 0, 0, 0]) + struct.pack(">IQII", timescale, time, 0xFFFFFFFF, event_id)
    return box(b"emsg", body + scheme.encode() + b"\0" + value.encode() + b"\0" + data)


def emsg_v0(timescale, delta, scheme, value, event_id, data):
    body = bytes([0, 0, 0, 0]) + scheme.encode() + b"\0" + value.encode() + b"\0" + struct.pack(">IIII", timescale, delta, 0xFFFFFFFF, event_id)
    return box(b"emsg", body + data)


def top_boxes(data):
    out, offset = [], 0
    while offset + 8 <= len(data):
        size, kind = struct.unpack(">I4s", data[offset:offset + 8])
        out.append((offset, kind, size))
        offset += size
    return out


def tfdt(data, moof_offset):
    """The base media decode time of the first traf of the moof at `moof_offset`."""
    size = struct.unpack(">I", data[moof_offset:moof_offset + 4])[0]
    index = data.index(b"tfdt", moof_offset, moof_offset + size)
    version = data[index + 4]
    return struct.unpack(">Q" if version else ">I", data[index + 8:index + (16 if version else 12)])[0]


def ffmpeg_dash(folder, seconds, media_name, use_timeline=True, extra=()):
    os.makedirs(folder, exist_ok=True)
    subprocess.run(["ffmpeg", "-nostdin", "-loglevel", "error", "-y",
                    "-f", "lavfi", "-i", "testsrc=size=160x90:rate=30000/1001",
                    "-f", "lavfi", "-i", "sine=frequency=1000:sample_rate=48000", "-t", str(seconds),
                    "-c:v", "mpeg2video", "-qscale:v", "31", "-g", "60", "-bf", "0", "-c:a", "aac", "-b:a", "16k", "-ac", "1",
                    "-f", "dash", "-seg_duration", str(SEGMENT), "-use_timeline", "1" if use_timeline else "0",
                    "-dash_segment_type", "mp4", "-media_seg_name", media_name,
                    "-init_seg_name", "init-$RepresentationID$.m4s", *extra, os.path.join(folder, "manifest.mpd")], check=True)
    return ET.parse(os.path.join(folder, "manifest.mpd"))


def representation(tree, content_type):
    for adaptation in tree.getroot().iter(q("AdaptationSet")):
        if adaptation.get("contentType") == content_type:
            return adaptation, adaptation.find(q("Representation"))
    raise KeyError(content_type)


def template_segments(rep):
    """(number, time, duration, name) of each segment of a SegmentTemplate, read from the MPD
    as this script understands the spec."""
    template = rep.find(q("SegmentTemplate"))
    timescale = int(template.get("timescale", "1"))
    number = int(template.get("startNumber", "1"))
    media = template.get("media")
    out = []
    timeline = template.find(q("SegmentTimeline"))
    if timeline is not None:
        time = 0
        for s in timeline.findall(q("S")):
            time = int(s.get("t", time))
            for _ in range(int(s.get("r", "0")) + 1):
                out.append((number, time, int(s.get("d"))))
                time += int(s.get("d"))
                number += 1
    else:
        duration = int(template.get("duration"))
        for place in range(-(-SECONDS * timescale // duration)):
            out.append((number + place, place * duration, duration))
    named = []
    for number, time, duration in out:
        name = media.replace("$RepresentationID$", rep.get("id")).replace("$Number%05d$", "%05d" % number)
        name = name.replace("$Number$", str(number)).replace("$Time$", str(time))
        named.append((number, time, duration, name))
    return timescale, named


def plant(folder, tree, content_type, truth, schemes, other_scheme=False):
    """Puts tags in each segment of the Representation: after styp, before sidx and moof, so no
    offset moves. `schemes`: (scheme, value, version) in turn, one tag per half segment."""
    _, rep = representation(tree, content_type)
    timescale, segments = template_segments(rep)
    for place, (number, time, duration, name) in enumerate(segments):
        path = os.path.join(folder, name)
        data = open(path, "rb").read()
        boxes = top_boxes(data)
        moof = next(offset for offset, kind, _ in boxes if kind == b"moof")
        # A v0 delta counts from the segment's start: only where the MPD's S@t is the fragment's
        # tfdt is that one time (ffmpeg's audio timeline starts after the AAC priming, its tfdt before).
        assert tfdt(data, moof) == time or all(version == 1 for _, _, version in schemes), (name, tfdt(data, moof), time)
        insert = next(offset for offset, kind, _ in boxes if kind in (b"sidx", b"moof"))
        tags = b""
        for half in range(2):
            delta = half * duration // 2 // 16 * 16
            scheme, value, version = schemes[(2 * place + half) % len(schemes)]
            text = owner(len(truth), seconds=(time + delta) / timescale)
            event_id = len(truth)
            if version == 1:
                tags += emsg_v1(timescale, time + delta, scheme, value, event_id, id3(text))
            else:
                tags += emsg_v0(timescale, delta, scheme, value, event_id, id3(text))
            pts = (time + delta) * 90_000 // timescale
            assert (time + delta) * 90_000 % timescale == 0
            truth.append({"segment": name, "number": number, "pts": pts, "owner": text, "scheme": scheme})
        if other_scheme and place == 0:
            tags += emsg_v1(timescale, time, SCTE, "", 999, b"\xfc\x30\x11not-an-id3-tag")
        open(path, "wb").write(data[:insert] + tags + data[insert:])


def declare(tree, content_type, scheme, value):
    adaptation, _ = representation(tree, content_type)
    stream = ET.Element(q("InbandEventStream"), {"schemeIdUri": scheme, "value": value})
    adaptation.insert(0, stream)


def write(tree, path):
    tree.write(path, xml_declaration=True, encoding="utf-8")


def timeline(root, truth):
    folder = os.path.join(root, "timeline")
    tree = ffmpeg_dash(folder, SECONDS, "chunk-$RepresentationID$-$Number%05d$.m4s")
    tags = truth.setdefault("timeline/manifest.mpd", [])
    plant(folder, tree, "audio", tags, [(NIELSEN, "1", 1), (AOM, "", 1), (APPLE, "", 1)], other_scheme=True)
    declare(tree, "audio", NIELSEN, "1")
    write(tree, os.path.join(folder, "manifest.mpd"))
    return tree


def time_named(root, truth):
    folder = os.path.join(root, "time")
    tree = ffmpeg_dash(folder, SECONDS, "chunk-$RepresentationID$-$Time$.m4s")
    plant(folder, tree, "video", truth.setdefault("time/manifest.mpd", []), [(NIELSEN, "1", 1), (AOM, "", 0)])


def number_named(root, truth):
    folder = os.path.join(root, "number")
    tree = ffmpeg_dash(folder, SECONDS, "chunk-$RepresentationID$-$Number$.m4s", use_timeline=False)
    # ffmpeg's @duration template: each segment's time is its place times the duration; the
    # audio segments' real starts differ by a frame or two, so tags go in the video, which agrees.
    plant(folder, tree, "video", truth.setdefault("number/manifest.mpd", []), [(AOM, "", 1)])


def events(root, truth):
    folder = os.path.join(root, "events")
    tree = ffmpeg_dash(folder, SECONDS, "chunk-$RepresentationID$-$Number%05d$.m4s")
    period = tree.getroot().find(q("Period"))
    stream = ET.Element(q("EventStream"), {"schemeIdUri": NIELSEN, "value": "1", "timescale": "1000",
                                           "presentationTimeOffset": "500"})
    tags = truth.setdefault("events/manifest.mpd", [])
    for place, ms in enumerate([1_500, 3_500, 6_000, 9_250, 11_000]):
        text = owner(1000 + place, seconds=ms / 1000)
        event = ET.SubElement(stream, q("Event"), {"presentationTime": str(ms + 500), "duration": "0", "id": str(place),
                                                   "contentEncoding": "base64"})
        event.text = base64.b64encode(id3(text)).decode()
        tags.append({"segment": None, "pts": ms * 90, "owner": text, "scheme": NIELSEN})
    # The same event again (same scheme, value, id): one event, not two.
    again = ET.SubElement(stream, q("Event"), {"presentationTime": "2000", "id": "0", "contentEncoding": "base64"})
    again.text = base64.b64encode(id3(tags[0]["owner"])).decode()
    period.insert(0, stream)
    write(tree, os.path.join(folder, "manifest.mpd"))


def periods(root, truth):
    folder = os.path.join(root, "periods")
    tags = truth.setdefault("periods/manifest.mpd", [])
    trees = [planted_period(folder, place, tags, "audio", [(NIELSEN, "1", 1)])[0] for place in range(2)]
    join_periods(folder, trees)


def planted_period(folder, place, tags, content_type, schemes):
    """Period `place` of a two-Period sample: its own ffmpeg output in FOLDER/pPLACE, tagged;
    the tree and its tagged segments' paths."""
    sub = os.path.join(folder, "p%d" % place)
    tree = ffmpeg_dash(sub, 8, "chunk-$RepresentationID$-$Number%05d$.m4s")
    plant(sub, tree, content_type, tags, schemes)
    for tag in tags:
        if not tag["segment"].startswith("p"):
            tag["segment"] = "p%d/%s" % (place, tag["segment"])
            tag["period"] = place
    _, segments = template_segments(representation(tree, content_type)[1])
    return tree, [os.path.join(sub, name) for _, _, _, name in segments]


def join_periods(folder, trees):
    """One MPD of the two Periods (PT0S and PT8S), each with its folder as BaseURL."""
    mpd = trees[0].getroot()
    mpd.set("mediaPresentationDuration", "PT16.0S")
    periods = [tree.getroot().find(q("Period")) for tree in trees]
    mpd.remove(periods[0])
    for place, period in enumerate(periods):
        period.set("start", "PT%dS" % (8 * place))
        period.set("id", "p%d" % place)
        base = ET.Element(q("BaseURL"))
        base.text = "p%d/" % place
        period.insert(0, base)
        mpd.append(period)
        os.remove(os.path.join(folder, "p%d" % place, "manifest.mpd"))
    write(trees[0], os.path.join(folder, "manifest.mpd"))


def as_repeat(emsg):
    """The box again, as a packager repeats it in the next segment its event spans: version 1
    unchanged; version 0 timed from that segment's start (its delta cannot reach back)."""
    if emsg[8] != 0:
        return emsg
    strings = emsg.index(b"\0", emsg.index(b"\0", 12) + 1) + 1
    return emsg[:strings + 4] + struct.pack(">I", 0) + emsg[strings + 8:]


def repeats(root, truth):
    """Two Periods of video whose every event box is repeated in the segment after its own, the
    first Period's last ones in the second's first segment: each tag is planted (and in the
    truth) once. The first Period's boxes are version 0 (AOM), the second's version 1 (Nielsen)."""
    folder = os.path.join(root, "repeats")
    tags = truth.setdefault("repeats/manifest.mpd", [])
    trees, files = [], []
    for place, schemes in enumerate([[(AOM, "", 0)], [(NIELSEN, "1", 1)]]):
        tree, paths = planted_period(folder, place, tags, "video", schemes)
        trees.append(tree)
        files += paths
    boxes = []
    for path in files:
        data = open(path, "rb").read()
        boxes.append([data[offset:offset + size] for offset, kind, size in top_boxes(data) if kind == b"emsg"])
    for place in range(1, len(files)):
        data = open(files[place], "rb").read()
        insert = next(offset for offset, kind, _ in top_boxes(data) if kind in (b"sidx", b"moof"))
        copies = b"".join(as_repeat(emsg) for emsg in boxes[place - 1])
        open(files[place], "wb").write(data[:insert] + copies + data[insert:])
    join_periods(folder, trees)


def indexed(root, truth):
    """ffmpeg's single file with a global sidx: ftyp, moov, sidx, then moof/mdat pairs. A tag
    goes before each moof; the sidx reference that spans it grows by its size."""
    folder = os.path.join(root, "indexed")
    work = tempfile.mkdtemp()
    tree = ffmpeg_dash(work, SECONDS, "unused", use_timeline=False,
                       extra=["-single_file", "1", "-global_sidx", "1", "-single_file_name", "audio-$RepresentationID$.mp4",
                              "-adaptation_sets", "id=0,streams=a", "-map", "1:a"])
    os.makedirs(folder, exist_ok=True)
    _, rep = representation(tree, "audio")
    name = rep.find(q("BaseURL")).text
    data = open(os.path.join(work, name), "rb").read()
    boxes = top_boxes(data)
    sidx_offset, _, sidx_size = next(b for b in boxes if b[1] == b"sidx")
    moov_offset, _, moov_size = next(b for b in boxes if b[1] == b"moov")
    sidx = bytearray(data[sidx_offset:sidx_offset + sidx_size])
    version = sidx[8]
    timescale = struct.unpack(">I", sidx[16:20])[0]
    head = 20 + (8 if version == 0 else 16)
    count = struct.unpack(">H", sidx[head + 2:head + 4])[0]
    tags = truth.setdefault("indexed/manifest.mpd", [])
    out = bytearray(data[:sidx_offset])
    body = b""
    moofs = [offset for offset, kind, _ in boxes if kind == b"moof"]
    assert len(moofs) == count, (len(moofs), count)
    ends = moofs[1:] + [len(data)]
    for place, (moof, end) in enumerate(zip(moofs, ends)):
        time = tfdt(data, moof)
        text = owner(2000 + place, seconds=time / timescale)
        tag = emsg_v1(timescale, time, NIELSEN, "1", place, id3(text))
        tags.append({"segment": name, "pts": time * 90_000 // timescale, "owner": text, "scheme": NIELSEN})
        body += tag + data[moof:end]
        reference = head + 4 + place * 12
        size = struct.unpack(">I", sidx[reference:reference + 4])[0]
        sidx[reference:reference + 4] = struct.pack(">I", size + len(tag))
    out += sidx + body
    open(os.path.join(folder, name), "wb").write(out)
    shutil.rmtree(work)
    # The MPD: SegmentBase naming the index and the movie header by range.
    segment_list = rep.find(q("SegmentList"))
    if segment_list is not None:
        rep.remove(segment_list)
    for old in rep.findall(q("SegmentBase")):
        rep.remove(old)
    segment_base = ET.SubElement(rep, q("SegmentBase"), {"timescale": str(timescale),
                                                          "indexRange": "%d-%d" % (sidx_offset, sidx_offset + sidx_size - 1)})
    ET.SubElement(segment_base, q("Initialization"), {"range": "%d-%d" % (0, moov_offset + moov_size - 1)})
    write(tree, os.path.join(folder, "manifest.mpd"))


def template_index(root, truth):
    """The indexed sample's file named by a SegmentTemplate@index (shaka's reading: the resource
    the template names holds the sidx and the subsegments it indexes), its movie header in a file
    of its own that @initialization names. No BaseURL: the templates resolve against the MPD."""
    folder = os.path.join(root, "template-index")
    os.makedirs(folder, exist_ok=True)
    source = ET.parse(os.path.join(root, "indexed", "manifest.mpd"))
    _, rep = representation(source, "audio")
    name = rep.find(q("BaseURL")).text
    segment_base = rep.find(q("SegmentBase"))
    init_end = int(segment_base.find(q("Initialization")).get("range").split("-")[1])
    data = open(os.path.join(root, "indexed", name), "rb").read()
    open(os.path.join(folder, "init-%s.mp4" % rep.get("id")), "wb").write(data[:init_end + 1])
    rep.remove(rep.find(q("BaseURL")))
    rep.remove(segment_base)
    ET.SubElement(rep, q("SegmentTemplate"), {"timescale": segment_base.get("timescale"),
                                              "index": "../indexed/audio-$RepresentationID$.mp4",
                                              "initialization": "init-$RepresentationID$.mp4"})
    write(source, os.path.join(folder, "manifest.mpd"))
    truth["template-index/manifest.mpd"] = truth["indexed/manifest.mpd"]


def protected(root, truth, source):
    """The timeline sample's media under an MPD that says it is encrypted."""
    folder = os.path.join(root, "protected")
    shutil.copytree(os.path.join(root, "timeline"), folder)
    os.remove(os.path.join(folder, "manifest.mpd"))
    for adaptation in source.getroot().iter(q("AdaptationSet")):
        for scheme, value in [("urn:mpeg:dash:mp4protection:2011", "cenc"),
                              ("urn:uuid:edef8ba9-79d6-4ace-a3c8-27dcd51d21ed", None),
                              ("urn:uuid:9a04f079-9840-4286-ab92-e65be0885f95", None)]:
            attributes = {"schemeIdUri": scheme}
            if value:
                attributes["value"] = value
                attributes["{urn:mpeg:cenc:2013}default_KID"] = "00010203-0405-0607-0809-0a0b0c0d0e0f"
            protection = ET.Element(q("ContentProtection"), attributes)
            if scheme.endswith("21ed"):
                # A licence server a player would call: a reader of tags never may.
                ET.SubElement(protection, "{urn:dashif:org:cenc}laurl").text = "https://licence.invalid/widevine"
            adaptation.insert(0, protection)
    write(source, os.path.join(folder, "manifest.mpd"))
    truth["protected/manifest.mpd"] = truth["timeline/manifest.mpd"]


def main(root):
    os.makedirs(root, exist_ok=True)
    truth = {}
    ET.register_namespace("cenc", "urn:mpeg:cenc:2013")
    ET.register_namespace("dashif", "urn:dashif:org:cenc")
    source = timeline(root, truth)
    time_named(root, truth)
    number_named(root, truth)
    events(root, truth)
    periods(root, truth)
    repeats(root, truth)
    indexed(root, truth)
    template_index(root, truth)
    protected(root, truth, source)
    with open(os.path.join(root, "truth.json"), "w") as out:
        json.dump(truth, out, indent=1, sort_keys=True)
    print("dash samples: %s" % ", ".join("%s %d tags" % (name, len(tags)) for name, tags in sorted(truth.items())))


if __name__ == "__main__":
    main(sys.argv[1])
