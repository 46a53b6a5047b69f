extension StringProtocol where SubSequence == Substring {
    /// Without the spaces, tabs and line ends around it: what playlists, MPDs and HTTP headers
    /// call white space (ASCII only, as their grammars do). Read on the UTF-8 view, without
    /// Foundation: its `trimmingCharacters` goes through NSString and the Unicode tables.
    package var trimmingWhitespace: Substring {
        let text = self[...]
        let isSpace = { (byte: UInt8) in byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D }
        guard let first = text.utf8.firstIndex(where: { !isSpace($0) }), let last = text.utf8.lastIndex(where: { !isSpace($0) }) else {
            return text[text.endIndex...]
        }
        return text[first...last]
    }
}
