/// A number written with a fixed count of decimals, as `printf`'s `%.Nf` writes it (its exact
/// binary value rounded, a tie to the even digit), without Foundation's `String(format:)`, which brings the ICU libraries.
package enum FixedPoint {
    /// `value` with `places` decimals (0 to 9); `sign` writes `+` before a positive number.
    /// A value that is not finite is written as `printf` writes it: `nan`, `inf`, `-inf`.
    package static func string(_ value: Double, places: Int, sign: Bool = false) -> String {
        guard value.isFinite else { return value.isNaN ? "nan" : value < 0 ? "-inf" : (sign ? "+inf" : "inf") }
        let places = min(max(places, 0), 9)
        var scale = 1.0
        for _ in 0..<places { scale *= 10 }
        // The whole part is exact; the fraction is rounded as its exact binary value is, not as its
        // product with the scale is: the product's rounding error (a fused multiply-add finds it)
        // decides a product that lands on a half.
        let magnitude = abs(value)
        // Past 2^64 there is no fraction, and no integer type to write it: written as Swift writes it.
        guard magnitude < 1.8e19 else { return (value.sign == .minus ? "" : sign ? "+" : "") + String(value) }
        var whole = UInt64(magnitude.rounded(.down))
        let product = (magnitude - magnitude.rounded(.down)) * scale
        let residual = (-product).addingProduct(magnitude - magnitude.rounded(.down), scale)
        var units = UInt64(product.rounded(.down))
        let fraction = product - product.rounded(.down)
        let odd = (places == 0 ? whole : units) % 2 == 1
        if fraction > 0.5 || (fraction == 0.5 && (residual > 0 || (residual == 0 && odd))) { units += 1 }
        if units == UInt64(scale) {
            (whole, units) = (whole + 1, 0)
        }
        var text = String(whole)
        if places > 0 {
            let digits = String(units)
            text += "." + String(repeating: "0", count: places - digits.count) + digits
        }
        // As printf: a negative value keeps its sign when it rounds to zero.
        return (value.sign == .minus ? "-" : sign ? "+" : "") + text
    }

    /// `string`, padded on the left with spaces to `width` characters, as `%W.Nf` pads.
    package static func string(_ value: Double, places: Int, width: Int) -> String {
        let text = string(value, places: places)
        return String(repeating: " ", count: max(0, width - text.count)) + text
    }
}
