/// Which of N `serve` instances meters a channel: rendezvous (highest random weight) hashing of
/// the channel's name, so each channel has exactly one instance, and going from N to N + 1
/// instances moves only the channels the new one wins, about 1/(N + 1) of them.
///
/// The hash is FNV-1a with a final mix, not Swift's `Hasher`, which is seeded anew in every
/// process: every instance must compute the same weights.
public struct Shard: Sendable, Equatable, CustomStringConvertible {
    /// From 0.
    public var index: Int
    public var count: Int

    public init?(index: Int, count: Int) {
        guard count >= 1, count <= 10_000, (0..<count).contains(index) else { return nil }
        self.index = index
        self.count = count
    }

    /// `I/N`, as `--shard` takes it.
    public init?(_ text: String) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let index = Int(parts[0]), let count = Int(parts[1]) else { return nil }
        self.init(index: index, count: count)
    }

    /// The ordinal at the end of a name, as a Kubernetes StatefulSet names its pods
    /// (`id3-meter-3` is 3).
    public static func ordinal(of name: String) -> Int? {
        let digits = name.reversed().prefix { $0.isASCII && $0.isNumber }
        guard !digits.isEmpty, digits.count < name.count, name.dropLast(digits.count).last == "-" else { return nil }
        return Int(String(digits.reversed()))
    }

    public var description: String { "\(index)/\(count)" }

    /// Whether this shard meters `channel`.
    public func holds(_ channel: String) -> Bool {
        Self.owner(of: channel, count: count) == index
    }

    /// The shard, of `count`, that meters `channel`: the one with the highest weight.
    public static func owner(of channel: String, count: Int) -> Int {
        var best = 0
        var bestWeight: UInt64 = 0
        for shard in 0..<count {
            let weight = weight(channel, shard)
            if shard == 0 || weight > bestWeight { (best, bestWeight) = (shard, weight) }
        }
        return best
    }

    static func weight(_ channel: String, _ shard: Int) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in channel.utf8 + [0] + String(shard).utf8 {
            hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
        }
        // splitmix64's finaliser: FNV alone leaves the weights of near names too alike.
        hash = (hash ^ (hash >> 30)) &* 0xbf58_476d_1ce4_e5b9
        hash = (hash ^ (hash >> 27)) &* 0x94d0_49bb_1331_11eb
        return hash ^ (hash >> 31)
    }
}
