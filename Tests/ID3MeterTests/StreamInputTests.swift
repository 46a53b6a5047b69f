import Foundation
import Testing
@testable import ID3Meter
@testable import ID3MeterCore
import SampleGenerator

/// MPEG-TS as it arrives from a contribution feed: over UDP (unicast and multicast) and SRT,
/// sent by libavformat's own output protocols, read through its input protocols.
@Suite("UDP and SRT inputs", .serialized, .timeLimit(.minutes(3)))
struct StreamInputTests {
    static func freePort() -> Int { Int.random(in: 20_000...40_000) }

    /// Scans `receiveURL` on a thread while `send` runs; the stream's end is the I/O timeout.
    func scanWhileSending(_ receiveURL: String, delay: Double, send: @escaping @Sendable () throws -> Void) async throws -> [MediaEvent] {
        let sender = Task { try await offThePool { Thread.sleep(forTimeInterval: delay); try send() } }
        var events: [MediaEvent] = []
        await TagScanner(fetcher: Fetcher(ioTimeout: .seconds(1.5), retry: .none)).scan(receiveURL) { events.append($0) }
        try await sender.value
        return events
    }

    @Test(arguments: ["udp://127.0.0.1:PORT", "udp://239.255.42.1:PORT?localaddr=127.0.0.1"])
    func transportStreamOverUDP(url: String) async throws {
        let port = Self.freePort()
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: Samples.path("quirks/quirks.ts"))))
        let address = url.replacingOccurrences(of: "PORT", with: "\(port)")
        let target = address.hasPrefix("udp://239") ? "udp://239.255.42.1:\(port)?localaddr=127.0.0.1&ttl=0" : address
        let events = try await scanWhileSending(address, delay: 0.5) { try StreamSender.send(bytes, to: target) }
        let expected = try Samples.expected("quirks/quirks.expected.jsonl")
        #expect(events.frames() == expected.map(FoundFrame.init))
        // The stream has no end but silence: the I/O timeout, reported, is how the read stops.
        #expect(events.failures.count == 1)
        guard case .readFailed(_, _, let silence)? = events.failures.first?.kind else { Issue.record("\(events.failures)"); return }
        #expect(silence != nil, "a udp or srt stream's silence is said")
    }

    /// A feed silent for a while, shorter than the I/O timeout, then back: each read gives its
    /// thread back after a short wait, and not a byte is lost to those waits.
    @Test func aFeedThatPausesLosesNothing() async throws {
        let port = Self.freePort()
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: Samples.path("quirks/quirks.ts"))))
        let half = bytes.count / 2 / 188 * 188
        let address = "udp://127.0.0.1:\(port)"
        let events = try await scanWhileSending(address, delay: 0.5) {
            try StreamSender.send(Array(bytes[..<half]), to: address)
            Thread.sleep(forTimeInterval: 1.2)   // several short waits, well within the 1.5 s timeout
            try StreamSender.send(Array(bytes[half...]), to: address)
        }
        let expected = try Samples.expected("quirks/quirks.expected.jsonl")
        #expect(events.frames() == expected.map(FoundFrame.init))
        #expect(events.failures.count == 1, "only the silence at the end: \(events.failures)")
    }

    /// A library caller's timeout of nothing (zero) neither traps nor waits for ever: the
    /// silent stream is given up at once, and said.
    @Test func aTimeoutOfNothingEndsASilentStream() async throws {
        let server = try LocalHTTPServer { _ in .notFound }   // connects, then says nothing
        defer { server.stop() }
        var events: [MediaEvent] = []
        await TagScanner(fetcher: Fetcher(ioTimeout: .zero, retry: .none)).scan("tcp://127.0.0.1:\(server.port)") { events.append($0) }
        #expect(events.failures.count == 1, "\(events.failures)")
        guard case .cannotOpen? = events.failures.first?.kind else { Issue.record("\(events.failures)"); return }
    }

    /// The meter on a UDP feed: every Nielsen tag sent, in PTS order, until the feed falls silent.
    @Test func theMeterOnAUDPFeed() throws {
        let port = Self.freePort()
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: Samples.path("quirks/quirks.ts"))))
        let (process, out, _) = try Command.launch(["--speed", "max", "--fps", "30", "--timeout", "2", "--format", "jsonl",
                                                    "udp://127.0.0.1:\(port)"])
        Thread.sleep(forTimeInterval: 1)
        try StreamSender.send(bytes, to: "udp://127.0.0.1:\(port)")
        let output = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let expected = try Samples.expected("quirks/quirks.expected.jsonl").filter(\.nielsen).sorted { $0.pts < $1.pts }
        #expect(Command.Send.records(in: String(decoding: output, as: UTF8.self)) == expected.map(Command.Send.init))
    }

    @Test func transportStreamOverSRT() async throws {
        let port = Self.freePort()
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: Samples.path("spec/standard-60.ts"))))
        let received = ReceivedEvents()
        let done = DispatchSemaphore(value: 0)
        // The sender listens; the scan calls it, as a receiver of a contribution feed does.
        Thread.detachNewThread {
            try? StreamSender.send(bytes, to: "srt://127.0.0.1:\(port)?mode=listener", pause: 0.001, linger: 1)
            done.signal()
        }
        try await Task.sleep(for: .seconds(1))
        await TagScanner(fetcher: Fetcher(ioTimeout: .seconds(3), retry: .none)).scan("srt://127.0.0.1:\(port)?mode=caller") { received.append($0) }
        done.wait()
        let expected = try Samples.expected("spec/standard-60.expected.jsonl")
        #expect(received.events.frames() == expected.map(FoundFrame.init), "\(received.events.failures)")
    }
}

final class ReceivedEvents: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: [MediaEvent] = []

    func append(_ event: MediaEvent) { lock.withLock { stored.append(event) } }
    var events: [MediaEvent] { lock.withLock { stored } }
}
