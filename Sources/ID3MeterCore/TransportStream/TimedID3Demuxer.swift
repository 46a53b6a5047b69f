#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads the timed-ID3 PES packets of an MPEG-TS byte stream from its TS packets, skipping
/// everything else. libavformat 5.1 cannot be used for this: it drops the first 5 bytes of
/// every stream_type 0x15 PES (a continuation PES loses tag bytes for good) and makes no
/// stream of a 0x15 PID without a metadata descriptor.
///
/// Bytes come in pieces of any size (a file read in chunks, HLS segments one after another,
/// a UDP stream); state carries across pieces, so a tag cut by a segment boundary is joined.
/// Equatable: two demuxers in the same state make the same events of the same bytes, which is
/// how a scan of a big file in blocks on several threads knows a block was read as it would
/// have been read in one go.
package struct TimedID3Demuxer: Sendable, Equatable {
    /// What the demuxer reports, in stream order.
    package enum Event: Sendable {
        case packet(TimedID3Packet)
        /// The program's audio at `pts`: its first PES of the input, and at the end its last.
        case audioTime(Int64, unit: Int)
        /// Damage, or an end cut short; `unit` is where it was found.
        case damage(InputFailure.StreamDamage, unit: Int)
        /// `ProgramSelection.single`: these programs all carry timed ID3, so none is read.
        case severalPrograms([Int], unit: Int)
    }

    /// Which programs are read.
    package let programs: ProgramSelection
    /// `ProgramSelection.single`: where the choice of program stands.
    private enum SingleProgram: Equatable {
        /// Some PMTs the PAT lists are not read yet (their PIDs); the timed-ID3 streams of those
        /// read so far wait, with their program and its audio PID.
        case waiting(unread: [Int], held: [HeldStream], tablesSeen: Int)
        /// Following this program's (`nil`: no program carried timed ID3 when every PMT was read).
        case chosen(Int?, saidSeveral: Bool)
        /// Several programs carry timed ID3: none is read.
        case refused
    }

    private struct HeldStream: Equatable {
        var program: Int
        var stream: ProgramTables.ElementaryStream
        var audioPID: Int?
    }

    /// A PAT seen this often without every PMT it lists: the programs whose PMT came are decided
    /// on (a PAT may list a program that is not in the stream).
    private static var tablesBeforeDeciding: Int { 10 }

    private var singleProgram = SingleProgram.waiting(unread: [], held: [], tablesSeen: 0)

    private enum Role: UInt8 { case other, pat, pmt, timedID3, audio }

    private var roles = [Role](repeating: .other, count: 8192)
    /// Sections being gathered, by PID. (Not in tables of 8,192 like `roles`: a stream has a
    /// few PSI PIDs, and two such tables cost every file of a folder 128 KB to clear.)
    private var sections = PIDMap<[UInt8]>()
    /// The last table read on each PSI PID: tables repeat every 100 ms or so, and one that
    /// has not changed is not parsed again.
    private var lastSections = PIDMap<[UInt8]>()
    private var pes = PIDMap<PESPacket>()
    /// Bytes held in PES and tags in progress, on every timed-ID3 PID together.
    private var heldBytes = 0
    private var joiners = PIDMap<TagJoiner>()
    private var continuity = PIDMap<UInt8>()
    private var lostSyncBytes = 0
    private var lostSyncAt: Int64 = 0
    /// The label the next bytes get; packets keep the label of the bytes they started in.
    package var unit = 0
    /// A PMT declared at least one timed-ID3 PID.
    package private(set) var hasTimedID3Stream = false
    /// The first program's audio: the first audio PID its PMT lists, whose PTS span the input's
    /// media time.
    private var audioPID: Int?
    private var lastAudioPTS: Int64?
    private var reportedFirstAudio = false
    /// The last PES PTS of each program's audio PID (the first its PMT lists). The Validator
    /// places each tag against its program's audio PES PTS before it (its test 22).
    private var programAudio = PIDMap<Int64>()

    /// What the PES and tags in progress may hold in all: one cap for the stream, not one a PID,
    /// since a PMT may declare thousands of timed-ID3 PIDs and leave each mid-PES. Four times the
    /// largest tag read.
    package static let maximumHeldBytes = 4 * TagJoiner.maximumTagBytes

    package init(programs: ProgramSelection = .all) {
        roles[0] = .pat
        self.programs = programs
    }

    /// It has read a program table naming a timed-ID3 PID, and a PES with a PTS on each: all it
    /// keeps from bytes further back, unless a tag or PES runs on from there.
    package var hasSettled: Bool {
        hasTimedID3Stream && joiners.allValues.allSatisfy(\.hasTimed) && (audioPID == nil || lastAudioPTS != nil)
    }

    /// Demuxes the whole TS packets at the front of `bytes`, which start at `offset` in the input,
    /// and returns how many bytes it used; the caller passes the rest again with more bytes.
    /// With `isFinal` everything is used.
    package mutating func demux(_ bytes: UnsafeBufferPointer<UInt8>, at offset: Int64, isFinal: Bool,
                               emit: (Event) -> Void) -> Int {
        let size = TransportStreamSync.packetSize
        var index = 0
        while bytes.count - index >= size {
            guard bytes[index] == 0x47 else {
                guard let next = Self.nextSync(in: bytes, after: index, isFinal: isFinal) else { break }
                if lostSyncBytes == 0 { lostSyncAt = offset + Int64(index) }
                lostSyncBytes += next - index
                index = next
                continue
            }
            reportLostSync(emit)
            let pid = Int(bytes[index + 1] & 0x1F) << 8 | Int(bytes[index + 2])
            if roles[pid] != .other {
                handle(UnsafeBufferPointer(rebasing: bytes[index..<index + size]), pid: pid, at: offset + Int64(index), emit: emit)
            }
            index += size
        }
        if isFinal, bytes.count > index, bytes[index] == 0x47 {
            // A recording cut inside a packet: what it holds is read; a timed-ID3 PES it continues keeps its bytes.
            reportLostSync(emit)
            let rest = UnsafeBufferPointer(rebasing: bytes[index...])
            if rest.count > 4 {
                let pid = Int(rest[1] & 0x1F) << 8 | Int(rest[2])
                if roles[pid] != .other { handle(rest, pid: pid, at: offset + Int64(index), emit: emit) }
            }
            emit(.damage(.endsInsidePacket(at: offset + Int64(index), bytes: rest.count), unit: unit))
            return bytes.count
        }
        if isFinal {
            if lostSyncBytes == 0 { lostSyncAt = offset + Int64(index) }
            lostSyncBytes += bytes.count - index
            reportLostSync(emit)
            return bytes.count
        }
        return index
    }

    /// Hands over what is still in progress, as it is, at the end of the input (or of a run of
    /// HLS segments, at a discontinuity), after which nothing can continue it.
    package mutating func flush(emit: (Event) -> Void) {
        for pid in pes.sortedPIDs { finishPES(pid: pid, atEnd: true, emit: emit) }
        for pid in joiners.sortedPIDs {
            heldBytes -= joiners[pid]?.heldByteCount ?? 0
            joiners[pid]?.release { emit(.packet($0)) }
        }
        if let lastAudioPTS { emit(.audioTime(lastAudioPTS, unit: unit)) }
    }

    /// At the end of one piece (an HLS segment): a PES of undeclared length is done when its
    /// tags are whole, so it is not held until the next piece starts another. Continuity
    /// counters need not run on into the next segment.
    package mutating func endOfUnit(emit: (Event) -> Void) {
        continuity.removeAll()
        for pid in pes.sortedPIDs {
            guard let packet = pes[pid], packet.declaredLength == nil,
                  case .success(let parsed) = packet.parsed(), TagJoiner.missingBytes(Array(parsed.payload)) == 0 else { continue }
            finishPES(pid: pid, emit: emit)
        }
    }

    private mutating func handle(_ packet: UnsafeBufferPointer<UInt8>, pid: Int, at position: Int64, emit: (Event) -> Void) {
        let startsUnit = packet[1] & 0x40 != 0
        let control = packet[3] >> 4 & 0x3
        var payloadStart = 4
        if control & 0x2 != 0 { payloadStart += 1 + Int(packet[4]) }
        guard control & 0x1 != 0, payloadStart < packet.count else { return }
        let payload = packet[payloadStart...]
        switch roles[pid] {
        case .pat, .pmt: collectSection(payload, pid: pid, startsSection: startsUnit, emit: emit)
        case .timedID3: collectPES(payload, pid: pid, startsPES: startsUnit, counter: packet[3] & 0x0F,
                                   discontinuityFlagged: control & 0x2 != 0 && packet[4] > 0 && packet[5] & 0x80 != 0,
                                   at: position, emit: emit)
        case .audio:
            guard startsUnit, let pts = PTS.inPESHeader(payload) else { return }
            programAudio[pid] = pts
            guard pid == audioPID else { return }
            lastAudioPTS = pts
            if !reportedFirstAudio {
                reportedFirstAudio = true
                emit(.audioTime(pts, unit: unit))
            }
        case .other: break
        }
    }

    // MARK: PSI

    private mutating func collectSection(_ payload: Slice<UnsafeBufferPointer<UInt8>>, pid: Int, startsSection: Bool,
                                         emit: (Event) -> Void) {
        if startsSection, roles[pid] == .pat, case .waiting(let unread, let held, let seen) = singleProgram, programs == .single {
            singleProgram = .waiting(unread: unread, held: held, tablesSeen: seen + 1)
            if seen + 1 >= Self.tablesBeforeDeciding, !unread.isEmpty { decideProgram(emit: emit) }
        }
        if startsSection {
            let start = payload.startIndex + 1 + Int(payload[payload.startIndex])
            guard start < payload.endIndex else { return }
            if let last = lastSections[pid], payload.endIndex - start >= last.count,
               !last.isEmpty, last.withUnsafeBytes({ memcmp($0.baseAddress!, payload.base.baseAddress! + start, last.count) == 0 }) {
                sections[pid] = nil
                return
            }
            sections[pid] = Array(payload[start...])
        } else if sections[pid] != nil {
            sections[pid]!.append(contentsOf: payload)
        }
        guard let section = sections[pid], section.count >= 3 else { return }
        let length = 3 + (Int(section[1] & 0x0F) << 8 | Int(section[2]))
        guard section.count >= length else { return }
        sections[pid] = nil
        lastSections[pid] = Array(section.prefix(length))
        if roles[pid] == .pat {
            for (program, pmt) in ProgramTables.programs(inPAT: section) where roles[pmt] == .other {
                if case .only(let chosen) = programs, program != chosen { continue }
                roles[pmt] = .pmt
                if case .waiting(let unread, let held, let seen) = singleProgram, programs == .single {
                    singleProgram = .waiting(unread: unread + [pmt], held: held, tablesSeen: seen)
                }
            }
            return
        }
        guard let program = ProgramTables.program(ofPMT: section) else { return }
        if case .only(let chosen) = programs, program != chosen { return }
        let streams = ProgramTables.streams(inPMT: section)
        let audio = streams.first { $0.isAudio && (roles[$0.pid] == .other || roles[$0.pid] == .audio) }?.pid
        if let audio, roles[audio] == .other {
            roles[audio] = .audio
            if audioPID == nil { audioPID = audio }
        }
        let timed = streams.filter { $0.isTimedID3 && roles[$0.pid] == .other }
        guard programs == .single else { return timed.forEach { follow($0, program: program, audioPID: audio) } }
        switch singleProgram {
        case .waiting(var unread, var held, let seen):
            unread.removeAll { $0 == pid }
            held.removeAll { $0.program == program }
            held += timed.map { HeldStream(program: program, stream: $0, audioPID: audio) }
            singleProgram = .waiting(unread: unread, held: held, tablesSeen: seen)
            if unread.isEmpty { decideProgram(emit: emit) }
        case .chosen(let chosen, let saidSeveral):
            guard !timed.isEmpty else { return }
            if chosen == nil || chosen == program {
                singleProgram = .chosen(program, saidSeveral: saidSeveral)
                timed.forEach { follow($0, program: program, audioPID: audio) }
            } else if !saidSeveral, let chosen {
                // A program that gained timed ID3 later is not read with the one being metered.
                singleProgram = .chosen(chosen, saidSeveral: true)
                emit(.severalPrograms([chosen, program].sorted(), unit: unit))
            }
        case .refused:
            return
        }
    }

    /// `ProgramSelection.single`, every PMT read (or the PAT seen often enough): the one program
    /// carrying timed ID3 is followed; several, none.
    private mutating func decideProgram(emit: (Event) -> Void) {
        guard case .waiting(_, let held, _) = singleProgram else { return }
        let carrying = Set(held.map(\.program)).sorted()
        guard carrying.count <= 1 else {
            singleProgram = .refused
            return emit(.severalPrograms(carrying, unit: unit))
        }
        singleProgram = .chosen(carrying.first, saidSeveral: false)
        for stream in held { follow(stream.stream, program: stream.program, audioPID: stream.audioPID) }
    }

    /// Reads `stream`'s PES from now on, as timed ID3 of `program`.
    private mutating func follow(_ stream: ProgramTables.ElementaryStream, program: Int, audioPID: Int?) {
        guard roles[stream.pid] == .other else { return }
        roles[stream.pid] = .timedID3
        hasTimedID3Stream = true
        var joiner = joiners[stream.pid] ?? TagJoiner(pid: stream.pid)
        joiner.isUndeclared = !stream.declaresID3
        joiner.program = program
        joiner.audioPID = audioPID
        joiners[stream.pid] = joiner
    }

    // MARK: PES

    private mutating func collectPES(_ payload: Slice<UnsafeBufferPointer<UInt8>>, pid: Int, startsPES: Bool, counter: UInt8,
                                     discontinuityFlagged: Bool, at position: Int64, emit: (Event) -> Void) {
        if let last = continuity[pid] {
            if counter == last { return }   // a repeated packet (§2.4.3.3)
            if counter != (last + 1) & 0x0F, !discontinuityFlagged {
                let lost = pes.removeValue(forKey: pid)
                heldBytes -= lost?.bytes.count ?? 0
                emit(.damage(.continuity(pid: pid, at: position, droppedPES: lost != nil), unit: lost?.unit ?? unit))
            }
        }
        continuity[pid] = counter
        if startsPES {
            finishPES(pid: pid, emit: emit)
            pes[pid] = PESPacket(bytes: Array(payload), position: position, unit: unit)
        } else if pes[pid] != nil {
            pes[pid]!.bytes += payload
        } else {
            return   // the rest of a PES that started before these bytes: nothing to time it by
        }
        heldBytes += payload.count
        if heldBytes > Self.maximumHeldBytes, let dropped = pes.removeValue(forKey: pid) {
            heldBytes -= dropped.bytes.count
            emit(.damage(.heldTooMuch(pid: pid, at: dropped.position, bytes: dropped.bytes.count, limit: Self.maximumHeldBytes),
                         unit: dropped.unit))
            return
        }
        if pes[pid]!.isComplete || pes[pid]!.bytes.count > TagJoiner.maximumTagBytes { finishPES(pid: pid, emit: emit) }
    }

    /// `atEnd`: nothing can follow, so a PES shorter than it declares is read as far as it goes.
    private mutating func finishPES(pid: Int, atEnd: Bool = false, emit: (Event) -> Void) {
        guard let packet = pes.removeValue(forKey: pid) else { return }
        heldBytes -= packet.bytes.count
        if atEnd, let declared = packet.declaredLength, packet.bytes.count < declared {
            emit(.damage(.endsInsidePES(pid: pid, at: packet.position, bytes: packet.bytes.count, declared: declared), unit: packet.unit))
        }
        switch packet.parsed(acceptingCut: atEnd) {
        case .success(let (payload, pts)):
            var joiner = joiners[pid] ?? TagJoiner(pid: pid)
            heldBytes -= joiner.heldByteCount
            joiner.accept(payload, pts: pts, audioPTS: joiner.audioPID.flatMap { programAudio[$0] }, position: packet.position,
                          unit: packet.unit) { emit(.packet($0)) }
            // A tag awaiting more PES past the cap is handed over as far as it goes.
            if heldBytes + joiner.heldByteCount > Self.maximumHeldBytes { joiner.release { emit(.packet($0)) } }
            heldBytes += joiner.heldByteCount
            joiners[pid] = joiner
        case .failure(let error):
            emit(.damage(.unreadablePES(pid: pid, at: packet.position, reason: error.reason), unit: packet.unit))
        }
    }

    // MARK: Sync

    private mutating func reportLostSync(_ emit: (Event) -> Void) {
        guard lostSyncBytes > 0 else { return }
        emit(.damage(.lostSync(at: lostSyncAt, skipped: lostSyncBytes), unit: unit))
        lostSyncBytes = 0
    }

    /// The next offset after `index` where a sync byte is followed by another a packet later;
    /// `nil` when more bytes are needed to tell. A candidate is never taken unchecked before
    /// the end: the bytes come in pieces of any size, and what is skipped must not depend on
    /// where a piece ended (the fuzzer's chunking check found that it did).
    private static func nextSync(in bytes: UnsafeBufferPointer<UInt8>, after index: Int, isFinal: Bool) -> Int? {
        let size = TransportStreamSync.packetSize
        var candidate = index + 1
        while candidate < bytes.count {
            if bytes[candidate] == 0x47 {
                if candidate + size < bytes.count {
                    if bytes[candidate + size] == 0x47 { return candidate }
                } else {
                    return isFinal ? candidate : nil
                }
            }
            candidate += 1
        }
        return isFinal ? bytes.count : (bytes.count - index > size ? bytes.count - size : nil)
    }
}
