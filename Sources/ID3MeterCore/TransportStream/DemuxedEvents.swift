extension TimedID3Demuxer.Event {
    /// What the demuxer found, decoded into scan events and handed to `emit` in order; `origin`
    /// places a unit's bytes.
    func decode(origin: (Int) -> TagOrigin, emit: (MediaEvent) -> Void) {
        switch self {
        case .packet(let packet):
            let contents = ID3PacketParser.parse(packet.bytes)
            let place = origin(packet.unit)
            var carriage = Carriage(stream: "PID \(TagJoiner.hex(packet.pid))", faults: packet.faults, audioPTS: packet.audioPTS)
            if contents.tags.count > 1 { carriage.faults.insert(.sharedPES) }
            let stream = TimedTag.TransportStreamPlace(program: packet.program, pid: packet.pid)
            for var tag in contents.tags {
                if !packet.notes.isEmpty { tag.notes += packet.notes }
                emit(.tag(TimedTag(tag: tag, pts: packet.pts, origin: place, carriage: carriage, transportStream: stream)))
            }
            if let error = contents.error {
                // Placed in the input: the offset inside the tag alone would say "byte 0" for most.
                let placed = ID3ParseError(error.reason, offset: Int(packet.position), offsetInTag: error.offset)
                emit(.malformed(placed, pts: packet.pts, origin: place))
            }
        case .audioTime(let pts, let unit):
            emit(.mediaTime(pts, origin: origin(unit)))
        case .severalPrograms(let programs, let unit):
            let place = origin(unit)
            emit(.failure(InputFailure(source: place.source, segment: place.segment?.uri, .severalPrograms(programs))))
        case .damage(let damage, let unit):
            let place = origin(unit)
            let failure = InputFailure(source: place.source, segment: place.segment?.uri, .damage(damage))
            emit(damage.lostBytes ? .failure(failure) : .warning(failure))
        }
    }
}
