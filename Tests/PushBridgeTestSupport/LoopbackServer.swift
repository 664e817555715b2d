#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// A tiny HTTP/1.1 server on 127.0.0.1 for the `--against URL` tests: it answers each POST with
/// what `respond` returns for the request body, on a background thread, one connection at a time.
package final class LoopbackServer: @unchecked Sendable {
    package let port: UInt16
    private let socketFD: Int32
    private let respond: @Sendable ([UInt8]) -> (status: Int, body: [UInt8])

    package init(respond: @escaping @Sendable ([UInt8]) -> (status: Int, body: [UInt8])) throws {
        self.respond = respond
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        socketFD = fd
        var yes: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) } }
        guard bound == 0, listen(fd, 16) == 0 else { throw POSIXError(.EADDRINUSE) }
        withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { _ = getsockname(fd, $0, &length) } }
        port = UInt16(bigEndian: address.sin_port)
        let thread = Thread { [self] in self.serve() }
        thread.start()
    }

    package var url: String { "http://127.0.0.1:\(port)/decide" }

    package func stop() {
        shutdown(socketFD, Int32(SHUT_RDWR))
        close(socketFD)
    }

    private func serve() {
        while true {
            let client = accept(socketFD, nil, nil)
            if client < 0 { return }
            handle(client)
            close(client)
        }
    }

    private func handle(_ client: Int32) {
        var request: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        var bodyStart: Int?
        var contentLength = 0
        while true {
            let n = read(client, &buffer, buffer.count)
            if n <= 0 { return }
            request += buffer[0..<n]
            if bodyStart == nil, let end = Self.find([13, 10, 13, 10], in: request) {
                bodyStart = end + 4
                let head = String(decoding: request[0..<end], as: UTF8.self).lowercased()
                for line in head.split(separator: "\r\n") where line.hasPrefix("content-length:") {
                    contentLength = Int(line.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) ?? 0
                }
            }
            if let start = bodyStart, request.count - start >= contentLength { break }
        }
        let body = Array(request[bodyStart!...].prefix(contentLength))
        let (status, answer) = respond(body)
        let head = "HTTP/1.1 \(status) \(status == 200 ? "OK" : "Error")\r\nContent-Type: application/json\r\nContent-Length: \(answer.count)\r\nConnection: close\r\n\r\n"
        let out = Array(head.utf8) + answer
        _ = out.withUnsafeBytes { write(client, $0.baseAddress, out.count) }
    }

    package static func find(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        for i in 0...(haystack.count - needle.count) where Array(haystack[i..<i + needle.count]) == needle { return i }
        return nil
    }
}
