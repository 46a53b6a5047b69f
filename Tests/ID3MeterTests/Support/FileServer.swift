import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A real HTTP/1.1 server on 127.0.0.1 that serves a folder, one connection at a time,
/// closing each after its response. Paths listed in `missing` answer 404. Call `stop()`.
final class FileServer: @unchecked Sendable {
    let root: URL
    let port: UInt16
    private let socket: Int32
    private let lock = NSLock()
    private var missingPaths: Set<String> = []
    private var requested: [String] = []

    init(root: URL) throws {
        self.root = root
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(socket, $0, length) == 0 && listen(socket, 16) == 0 && getsockname(socket, $0, &length) == 0
            }
        }
        guard bound else {
            close(socket)
            throw POSIXError(.EADDRNOTAVAIL)
        }
        self.socket = socket
        port = UInt16(bigEndian: address.sin_port)
        Thread.detachNewThread { [self] in serve() }
    }

    /// Ends the accept loop; the server thread lets go of the server.
    func stop() {
        shutdown(socket, Int32(SHUT_RDWR))
        close(socket)
    }

    var baseURL: String { "http://127.0.0.1:\(port)" }

    func url(_ path: String) -> String { "\(baseURL)/\(path)" }

    var missing: Set<String> {
        get { lock.withLock { missingPaths } }
        set { lock.withLock { missingPaths = newValue } }
    }

    var requests: [String] { lock.withLock { requested } }

    private func serve() {
        while true {
            let client = accept(socket, nil, nil)
            guard client >= 0 else { return }
            respond(client)
            close(client)
        }
    }

    private func respond(_ client: Int32) {
        var request = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !request.ends(with: Array("\r\n\r\n".utf8)) {
            let count = read(client, &buffer, buffer.count)
            guard count > 0 else { return }
            request += buffer.prefix(count)
        }
        let path = String(decoding: request, as: UTF8.self).split(separator: " ").dropFirst().first.map { String($0.dropFirst()) } ?? ""
        lock.withLock { requested.append(path) }
        let body = missing.contains(path) ? nil : try? Data(contentsOf: root.appendingPathComponent(path))
        let head = body == nil
            ? "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
            : "HTTP/1.1 200 OK\r\nContent-Length: \(body!.count)\r\nConnection: close\r\n\r\n"
        let response = Array(head.utf8) + (body.map { [UInt8]($0) } ?? [])
        var sent = 0
        while sent < response.count {
            let count = response[sent...].withUnsafeBytes { write(client, $0.baseAddress, $0.count) }
            guard count > 0 else { return }
            sent += count
        }
    }
}

private extension Array where Element == UInt8 {
    func ends(with suffix: [UInt8]) -> Bool { count >= suffix.count && Array(self[(count - suffix.count)...]) == suffix }
}
