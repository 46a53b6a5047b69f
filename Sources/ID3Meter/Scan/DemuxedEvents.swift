extension TimedID3Demuxer.Event {
    /// What the demuxer found, decoded into scan events; `origin` places a unit's bytes.
    func scanEvents(origin: (Int) -> TagOrigin) -> [ScanEvent] {
        switch self {
        case .packet(let packet):
            let contents = ID3PacketParser.parse(packet.bytes)
            let place = origin(packet.unit)
            var events: [ScanEvent] = contents.tags.map { tag in
                var tag = tag
                tag.notes += packet.notes
                return .tag(TimedTag(tag: tag, pts: packet.pts, origin: place))
            }
            if let error = contents.error { events.append(.malformed(error, pts: packet.pts, origin: place)) }
            return events
        case .damage(let reason, let unit):
            let place = origin(unit)
            return [.failure(InputFailure(source: place.source, segment: place.segment?.uri, reason: reason))]
        }
    }
}
