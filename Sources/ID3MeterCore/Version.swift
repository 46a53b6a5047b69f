/// The one place the version is written: `--version`, the collector's batches, the man page.
package enum ID3MeterVersion {
    /// The release: in `--version`, the User-Agent and collector batches.
    public static let current = "0.13.0"
}
