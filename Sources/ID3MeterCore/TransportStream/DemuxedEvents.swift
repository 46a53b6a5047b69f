extension TimedID3Demuxer.Event {
    /// What the demuxer found, decoded into scan events; `origin` places a unit's bytes.
    func mediaEvents(origin: (Int) -> TagOrigin) -> [MediaEvent] {
        switch self {
        case .packet(let packet):
            let contents = ID3PacketParser.parse(packet.bytes)
            let place = origin(packet.unit)
            var events: [MediaEvent] = contents.tags.map { tag in
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
        case .damage(let damage, let unit):
            let place = origin(unit)
            let failure = InputFailure(source: place.source, segment: place.segment?.uri, reason: damage.description, cause: damage)
            return [damage.lostBytes ? .failure(failure) : .warning(failure)]
        }
    }
}
