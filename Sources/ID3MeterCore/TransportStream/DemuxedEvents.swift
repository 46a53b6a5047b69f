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
            if let error = contents.error {
                // Placed in the input: the offset inside the tag alone would say "byte 0" for most.
                let placed = ID3ParseError(reason: "\(error.reason) (byte \(error.offset) of the tag)", offset: Int(packet.position))
                events.append(.malformed(placed, pts: packet.pts, origin: place))
            }
            return events
        case .damage(let reason, let unit):
            let place = origin(unit)
            return [.failure(InputFailure(source: place.source, segment: place.segment?.uri, reason: reason))]
        case .endsInsidePES(let pid, let bytes, let declared, let position, let unit):
            let place = origin(unit)
            return [.warning(InputFailure(source: place.source, segment: place.segment?.uri, reason:
                "ends inside the timed-ID3 PES on PID \(TagJoiner.hex(pid)) at byte \(position): \(bytes) of \(declared) bytes, read as they are"))]
        case .endsInsidePacket(let bytes, let position, let unit):
            let place = origin(unit)
            return [.warning(InputFailure(source: place.source, segment: place.segment?.uri,
                                          reason: "ends inside a TS packet: the last \(bytes) bytes, from byte \(position), are a packet cut short"))]
        }
    }
}
