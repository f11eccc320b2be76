extension String {
    /// The string with each Unicode scalar replaced by what `replacement` returns for it, or
    /// kept when it returns nil: the one loop behind the escapers that make outside text safe
    /// for a format (XML in the CLI's SVG, one log line in the daemon's log).
    public func rewritingScalars(_ replacement: (Unicode.Scalar) -> String?) -> String {
        var out = ""
        out.reserveCapacity(utf8.count)
        for scalar in unicodeScalars {
            if let replaced = replacement(scalar) {
                out += replaced
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}
