import Foundation
import Hummingbird
import NIOCore
import NIOHTTP1
import PushBridgeJSON
import PushBridgeStore

/// A request the service refuses or cannot complete: the HTTP status and the error body
/// `{"error": {"code", "pointer", "expected", "found"}}` (Specification §11). The codes of bad input are
/// the command line's (`missing-key`, `wrong-type`, …).
public struct ServiceError: Error, HTTPResponseError, Sendable, CustomStringConvertible {
    public var status: HTTPResponse.Status
    /// `unknown-key`, `unauthorized`, `busy`, …
    public var code: String
    /// Where in the request: a JSON pointer into the body, or `?name` for a query parameter.
    public var pointer: String
    public var expected: String
    public var found: String?
    /// Seconds a client should wait before retrying (503).
    public var retryAfterSeconds: Int?

    /// - Parameters:
    ///   - status: the HTTP status.
    ///   - code: the error code.
    ///   - pointer: where in the request.
    ///   - expected: what was expected.
    ///   - found: what was found, if anything.
    ///   - retryAfterSeconds: the `Retry-After` seconds of a temporary refusal, if any.
    public init(_ status: HTTPResponse.Status, code: String, pointer: String = "", expected: String, found: String? = nil, retryAfterSeconds: Int? = nil) {
        self.status = status
        self.code = code
        self.pointer = pointer
        self.expected = expected
        self.found = found
        self.retryAfterSeconds = retryAfterSeconds
    }

    /// Bad input: 400 with the input error's code and pointer; `unknown-reference` to something
    /// the path names is 404.
    init(_ error: InputError, status: HTTPResponse.Status = .badRequest, parameter: String? = nil) {
        self.init(status, code: error.code.description, pointer: parameter.map { "?" + $0 } ?? error.pointer.description,
            expected: error.expected, found: error.found)
    }

    /// The writer did not get to the write in time; nothing was applied.
    static let busy = ServiceError(.serviceUnavailable, code: "busy", expected: "a less busy store: retry after the given seconds", retryAfterSeconds: 1)
    /// The service is stopping; nothing was applied.
    static let stopping = ServiceError(.serviceUnavailable, code: "stopping", expected: "a running service: retry on another node or later", retryAfterSeconds: 1)

    /// The request's HTTP framing is broken (a bad chunk size, an unknown method, a header block
    /// over the limit): 400, and the connection closes after the answer.
    static func malformedHTTP(_ error: HTTPParserError) -> ServiceError {
        ServiceError(.badRequest, code: "malformed-http", expected: "a well-formed HTTP/1.1 request (RFC 9112)", found: "\(error)")
    }

    /// The client hung up or stalled before its body was read: nobody is there to answer. Counted
    /// with status 499 (as nginx does) and logged at `info`, never as a server error.
    package static let clientClosed = ServiceError(
        HTTPResponse.Status(code: 499, reasonPhrase: "Client Closed Request"), code: "client-closed", expected: "the whole body before the connection ends")

    /// The service's answer to an error thrown while a request's body was read or parsed, or
    /// `nil` when the error is not about the request's bytes: a framing error is 400
    /// `malformed-http`, a body cut short (the client hung up, reset, or stalled past the
    /// timeout) is ``clientClosed``.
    static func reading(_ error: any Error) -> ServiceError? {
        switch error {
        case let error as HTTPParserError: return error == .invalidEOFState ? .clientClosed : .malformedHTTP(error)
        case let error as HTTPConnectionGuard.ChunkTooLarge:
            return ServiceError(.contentTooLarge, code: "too-large", expected: "a body of at most \(error.limit) bytes", found: "a chunk of 0x\(error.declared) bytes")
        case is ChannelError, is IOError, is CancellationError: return .clientClosed
        default: return nil
        }
    }

    /// The store cannot be reached (PostgreSQL down, restarting, or past a statement's deadline):
    /// nothing was applied; retry, here or on another node.
    static let storeUnavailable = ServiceError(
        .serviceUnavailable, code: "store-unavailable", expected: "a reachable store: retry after the given seconds", retryAfterSeconds: 1)

    /// The store did not end a commit within the request timeout (PostgreSQL stopped answering
    /// mid-write): the write may still be applied, so a retry carries the same message id (a repeat
    /// within the repeat window gets the first one's outcome).
    static let storeTimedOut = ServiceError(
        .serviceUnavailable, code: "store-unavailable",
        expected: "a store that answers in time: the write may still be applied; retry with the same message id", retryAfterSeconds: 1)

    /// A store failure: busy or unreachable → 503 with `Retry-After`, anything else → 500 (the
    /// details go to the log only).
    package static func store(_ error: any Error) -> ServiceError {
        if let error = error as? ServiceError { return error }
        if let error = error as? StoreError, error.code == .busy { return .busy }
        if let error = error as? StoreError, error.code == .unreachable { return .storeUnavailable }
        return ServiceError(.internalServerError, code: "store-failure", expected: "a working store (see the service log)")
    }

    public var description: String {
        "\(status.code) [\(code)] \(pointer.isEmpty ? "" : pointer + ": ")expected \(expected)" + (found.map { ", found \($0)" } ?? "")
    }

    /// The error body.
    var body: [UInt8] {
        var w = JSONWriter(capacity: 160)
        w.raw("{\"error\":{\"code\":")
        w.string(code)
        w.raw(",\"pointer\":")
        w.string(pointer)
        w.raw(",\"expected\":")
        w.string(expected)
        if let found {
            w.raw(",\"found\":")
            w.string(found)
        }
        w.raw("}}")
        return w.bytes
    }

    public func response(from request: Request, context: some RequestContext) throws -> Response { response() }

    /// The error as one line for a vendor's error text: `pointer: expected …, found …` (no status, no code).
    package var vendorText: String {
        var text = (pointer.isEmpty ? "" : pointer + ": ") + "expected " + expected
        if let found { text += ", found " + found }
        return text
    }

    /// The answer: the status, the error body, `Retry-After` when given.
    package func response() -> Response {
        var headers: HTTPFields = [.contentType: "application/json"]
        if let retryAfterSeconds { headers[.retryAfter] = String(retryAfterSeconds) }
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: body)))
    }
}
