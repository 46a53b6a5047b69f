/// The frame of our self-contained pages (the QA report, the live line-up, the coverage report):
/// one file, its style inline, a Content-Security-Policy that lets it fetch nothing else.
enum HTMLDocument {
    /// A page titled `title`, with `style` and `body`; `policy` is what it may run or fetch
    /// beyond its inline style.
    static func page(title: String, style: String, policy: String = "", body: String) -> String {
        """
        <!DOCTYPE html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'\(policy)">
        <title>\(escaped(title))</title>
        <style>\(style)</style>
        </head>
        <body>
        \(body)
        </body>
        </html>

        """
    }

    /// Text as HTML text or an attribute's value.
    static func escaped(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }
}
