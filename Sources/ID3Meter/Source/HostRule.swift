import Foundation
#if canImport(Glibc)
import Glibc
#endif

extension Fetcher {
    /// Where a stream added over `serve`'s API may be fetched from: not this machine's loopback, nor
    /// link-local or private networks (an internal service asked for by whoever reaches the API),
    /// unless the operator's allow-list names the host or a network it is in. Checked on the
    /// addresses the host resolves to, at every request and every redirect hop, so that a name
    /// that later resolves elsewhere, or a redirect, cannot reach them either.
    public struct HostRule: Sendable, Equatable {
        /// Host names (`cdn.example.com`, or `.example.com` for any below it) and IPv4 networks
        /// (`203.0.113.0/24`) always allowed.
        public var allowed: [String]

        public init(allowed: [String] = []) { self.allowed = allowed }

        /// Why `host` may not be reached; `nil` when it may. Resolving blocks (a slow DNS server waits
        /// out its timeouts), so it runs on `BlockingPool`, never on a thread of the cooperative pool
        /// every channel shares.
        public func refusal(of host: String) async -> String? {
            await BlockingPool.run { self.check(host) }
        }

        private func check(_ host: String) -> String? {
            let name = host.lowercased().trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
            if allowed.contains(where: { Self.matches(name: name, entry: $0.lowercased()) }) { return nil }
            let addresses = Self.resolve(name)
            guard !addresses.isEmpty else { return "\(host) does not resolve" }
            for address in addresses {
                if allowed.contains(where: { Self.contains(network: $0, address: address) }) { continue }
                if let kind = Self.internalKind(of: address) {
                    return "\(host) is \(address), a \(kind) address: a channel added over the API may not reach it "
                        + "(list it under api_hosts in the line-up file to allow it)"
                }
            }
            return nil
        }

        /// Loopback, link-local, private or otherwise not public; `nil` for a public address.
        static func internalKind(of address: String) -> String? {
            if let v4 = IPv4(address) {
                switch (v4.octets[0], v4.octets[1]) {
                case (127, _): return "loopback"
                case (10, _), (172, 16...31), (192, 168): return "private"
                case (169, 254): return "link-local"
                case (0, _): return "unspecified"
                case (100, 64...127): return "shared (carrier-grade NAT)"
                case (224...255, _): return "multicast or reserved"
                default: return nil
                }
            }
            let lower = address.lowercased()
            if lower == "::1" { return "loopback" }
            if lower == "::" { return "unspecified" }
            if lower.hasPrefix("fe8") || lower.hasPrefix("fe9") || lower.hasPrefix("fea") || lower.hasPrefix("feb") { return "link-local" }
            if lower.hasPrefix("fc") || lower.hasPrefix("fd") { return "private" }
            if lower.hasPrefix("::ffff:") { return internalKind(of: String(lower.dropFirst(7))) }
            return nil
        }

        /// Why `entry` cannot be an allow-list entry (a host name, `.suffix`, an IPv4 address or an
        /// IPv4 network `A.B.C.D/N`); `nil` when it can. An entry that could never match is refused
        /// rather than kept: the operator meant something by it.
        public static func problem(with entry: String) -> String? {
            if let slash = entry.firstIndex(of: "/"), IPv4(String(entry[..<slash])) != nil {
                let parts = entry.split(separator: "/", omittingEmptySubsequences: false)
                guard parts.count == 2, let bits = Int(parts[1]), (0...32).contains(bits) else {
                    return "'\(entry)' is not an IPv4 network (A.B.C.D/N, N from 0 to 32)"
                }
                return nil
            }
            let name = entry.hasPrefix(".") ? entry.dropFirst() : Substring(entry)
            guard !name.isEmpty, name.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "-.:".contains($0)) }) else {
                return "'\(entry)' is not a host name, .suffix, address or network"
            }
            return nil
        }

        private static func matches(name: String, entry: String) -> Bool {
            entry.hasPrefix(".") ? name.hasSuffix(entry) : name == entry
        }

        private static func contains(network entry: String, address: String) -> Bool {
            let parts = entry.split(separator: "/")
            guard parts.count == 2, let base = IPv4(String(parts[0])), let bits = Int(parts[1]), (0...32).contains(bits),
                  let candidate = IPv4(address) else { return false }
            let mask: UInt32 = bits == 0 ? 0 : ~UInt32(0) << (32 - bits)
            return base.value & mask == candidate.value & mask
        }

        /// The addresses `host` resolves to, as text.
        static func resolve(_ host: String) -> [String] {
            var hints = addrinfo()
            hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
            var list: UnsafeMutablePointer<addrinfo>?
            guard getaddrinfo(host, nil, &hints, &list) == 0 else { return [] }
            defer { freeaddrinfo(list) }
            var addresses: [String] = []
            var entry = list
            while let current = entry {
                var text = [CChar](repeating: 0, count: Int(NI_MAXHOST))
                if getnameinfo(current.pointee.ai_addr, current.pointee.ai_addrlen, &text, socklen_t(text.count), nil, 0, NI_NUMERICHOST) == 0 {
                    addresses.append(String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
                }
                entry = current.pointee.ai_next
            }
            return addresses
        }

        private struct IPv4 {
            var octets: [UInt8]
            var value: UInt32 { octets.reduce(0) { $0 << 8 | UInt32($1) } }

            init?(_ text: String) {
                let parts = text.split(separator: ".", omittingEmptySubsequences: false).compactMap { UInt8($0) }
                guard parts.count == 4, text.split(separator: ".", omittingEmptySubsequences: false).count == 4 else { return nil }
                octets = parts
            }
        }
    }
}
