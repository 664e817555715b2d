import CZlib

/// zlib streams (RFC 1950), as Tencent's UserSig carries its JSON.
package enum Zlib {
    /// Inflates a zlib stream.
    /// - Parameters:
    ///   - data: the compressed bytes.
    ///   - limit: the most bytes the result may have (a UserSig is small; a bomb is refused).
    /// - Returns: the bytes, or `nil` when the stream is not valid zlib or inflates past `limit`.
    package static func inflate(_ data: [UInt8], limit: Int = 64 * 1024) -> [UInt8]? {
        guard !data.isEmpty else { return nil }
        var stream = z_stream()
        guard inflateInit_(&stream, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else { return nil }
        defer { inflateEnd(&stream) }
        var input = data
        var output = [UInt8](repeating: 0, count: limit + 1)
        let status: Int32 = input.withUnsafeMutableBufferPointer { inBuffer in
            output.withUnsafeMutableBufferPointer { outBuffer in
                stream.next_in = inBuffer.baseAddress
                stream.avail_in = UInt32(inBuffer.count)
                stream.next_out = outBuffer.baseAddress
                stream.avail_out = UInt32(outBuffer.count)
                return CZlib.inflate(&stream, Z_FINISH)
            }
        }
        guard status == Z_STREAM_END, stream.avail_in == 0, Int(stream.total_out) <= limit else { return nil }
        return Array(output.prefix(Int(stream.total_out)))
    }

    /// Deflates bytes into a zlib stream (test vectors and the UserSig generator).
    /// - Parameters:
    ///   - data: the bytes.
    ///   - level: zlib's level, 0 (stored blocks) to 9; vendors' generators differ (Python's: 6).
    package static func deflate(_ data: [UInt8], level: Int32 = Z_BEST_COMPRESSION) -> [UInt8] {
        var size = compressBound(UInt(data.count))
        var output = [UInt8](repeating: 0, count: Int(size))
        let status = data.withUnsafeBufferPointer { input in
            output.withUnsafeMutableBufferPointer { out in
                compress2(out.baseAddress, &size, input.baseAddress, UInt(input.count), level)
            }
        }
        precondition(status == Z_OK, "compress2 cannot fail with a buffer of compressBound bytes")
        return Array(output.prefix(Int(size)))
    }
}
