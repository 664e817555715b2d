import Foundation
import Hummingbird
import Logging
import NIOCore
import PushBridgeCore
import PushBridgeDialects
import PushBridgeFacade
import PushBridgeJSON

/// The native API (Specification §11) over the service's apps: every handler reads its request, hands one
/// facade operation to the app's writer (or a reader), and writes the answer. No rule lives here.
package struct ServiceRoutes: Sendable {
    package let apps: ServiceApps
    let configuration: ServiceConfiguration
    let metrics: ServiceMetrics
    package let logger: Logger
    /// The vendor REST families served beside the native API.
    let vendors: [VendorRESTFamily]

    package typealias Context = ServiceRequestContext

    func register(on router: RecordingRouter<Context>) {
        registerHealth(on: router)
        registerApps(on: router)
        registerUsers(on: router)
        registerGroups(on: router)
        registerMessages(on: router)
        registerTasks(on: router)
        registerVendors(on: router)
        for family in vendors { family.rest.register(on: router, routes: self) }
    }

    // MARK: Request helpers

    /// The app of the path, once the bearer key is checked: unknown app → 404, no key or a key of
    /// no app → 401, another app's key (or the admin key) → 403, saying nothing of the other app.
    func tenant(_ request: Request, _ context: Context) async throws -> AppTenant {
        let app = try parameter("app", context)
        guard try await apps.exists(app) else {
            throw ServiceError(.notFound, code: "unknown-app", pointer: "", expected: "an app created with POST /v1/apps", found: JSONWriter.quoted(app))
        }
        switch await apps.access(to: app, key: request.bearerKey) {
        case .granted: return try await apps.tenant(app)
        case .unauthenticated:
            throw ServiceError(.unauthorized, code: "unauthorized", expected: "Authorization: Bearer <the app's key>")
        case .forbidden:
            throw ServiceError(.forbidden, code: "forbidden", expected: "the key of app \(JSONWriter.quoted(app)) (this key is not for it)")
        }
    }

    /// A path parameter, percent-decoded (a vendor's group id such as `@TGS#2J4SZEAEL` travels
    /// as `@TGS%232J4SZEAEL`) and following ``IdentifierRule`` (every path parameter is an id or a word):
    /// 400 `invalid-value` at `{name}` otherwise.
    package func parameter(_ name: String, _ context: Context) throws -> String {
        let raw = try context.parameters.require(name)
        guard let decoded = raw.utf8.contains(UInt8(ascii: "%")) ? raw.removingPercentEncoding : raw else {
            throw ServiceError(.badRequest, code: "invalid-value", pointer: "{\(name)}", expected: "a percent-encoded path segment of UTF-8", found: JSONWriter.quoted(raw))
        }
        if let violation = IdentifierRule.violation(in: decoded) {
            throw ServiceError(.badRequest, code: "invalid-value", pointer: "{\(name)}", expected: "an id of " + IdentifierRule.summary, found: violation)
        }
        return decoded
    }

    /// An id given as a query parameter (`?sender=`): non-empty and following ``IdentifierRule``.
    func queryIdentifier(_ name: String, _ request: Request) throws -> String? {
        guard let value = request.uri.queryParameters.get(name) else { return nil }
        guard !value.isEmpty else { throw ServiceError(.badRequest, code: "invalid-value", pointer: "?\(name)", expected: "a non-empty user id", found: "\"\"") }
        if let violation = IdentifierRule.violation(in: value) {
            throw ServiceError(.badRequest, code: "invalid-value", pointer: "?\(name)", expected: "a user id of " + IdentifierRule.summary, found: violation)
        }
        return value
    }

    /// A required query parameter naming a dialect.
    func dialect(_ request: Request, in tenant: AppTenant) throws -> String {
        guard let dialect = request.uri.queryParameters.get("dialect") else {
            throw ServiceError(.badRequest, code: "missing-key", pointer: "?dialect", expected: "?dialect= one of " + tenant.registry.ids.joined(separator: ", "))
        }
        do {
            _ = try tenant.registry.adapter(dialect, at: .root)
        } catch let error as InputError {
            throw ServiceError(error, parameter: "dialect")
        }
        return dialect
    }

    /// The request body as JSON: at most the configured size (413), `application/json` when a
    /// content type is given (415), well-formed (400 with the pointer).
    package func body(_ request: Request, _ context: Context) async throws -> JSONValue {
        guard let value = try await optionalBody(request, context) else {
            throw ServiceError(.badRequest, code: "missing-key", pointer: "/", expected: "a JSON body")
        }
        return value
    }

    /// The request body as JSON, or `nil` when there is none. A body declared larger than the
    /// limit is refused before a byte of it is read (413 at once, also to a client waiting on
    /// `Expect: 100-continue`, which gets `100 Continue` only here, once the request is accepted).
    func optionalBody(_ request: Request, _ context: Context) async throws -> JSONValue? {
        if let type = request.headers[.contentType] {
            guard Self.isJSON(mediaType: type) else {
                throw ServiceError(.unsupportedMediaType, code: "unsupported-media-type", expected: "Content-Type: application/json", found: JSONWriter.quoted(type))
            }
        }
        if let declared = request.headers[.contentLength], let length = UInt64(declared), length > UInt64(configuration.bodyLimitBytes) {
            throw ServiceError(.contentTooLarge, code: "too-large", expected: "a body of at most \(configuration.bodyLimitBytes) bytes", found: "Content-Length: \(declared)")
        }
        context.continueReadingBody(of: request)
        let buffer: ByteBuffer
        do {
            buffer = try await request.body.collect(upTo: configuration.bodyLimitBytes)
        } catch is NIOTooManyBytesError {
            throw ServiceError(.contentTooLarge, code: "too-large", expected: "a body of at most \(configuration.bodyLimitBytes) bytes")
        } catch {
            throw ServiceError.reading(error) ?? error
        }
        guard buffer.readableBytes > 0 else { return nil }
        do {
            return try JSONParser.parse(buffer.readableBytesView)
        } catch let error as InputError {
            throw ServiceError(error)
        }
    }

    /// Whether a `Content-Type` is `application/json` or `…+json` (any case, parameters allowed);
    /// bytes, not Foundation's string functions: it runs on every request.
    static func isJSON(mediaType: String) -> Bool {
        var media = Array(mediaType.utf8.prefix { $0 != UInt8(ascii: ";") })
        while media.last == UInt8(ascii: " ") { media.removeLast() }
        while media.first == UInt8(ascii: " ") { media.removeFirst() }
        let lower = media.map { $0 >= 65 && $0 <= 90 ? $0 | 0x20 : $0 }
        return lower == Array("application/json".utf8) || (lower.count > 5 && lower.suffix(5).elementsEqual("+json".utf8))
    }

    /// Runs a facade operation, turning bad input into 400 (or `notFound` for a reference to
    /// something the path names) and store failures into 503/500.
    package func answering<T>(notFoundAt pointers: Set<String> = [], _ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let error as InputError {
            let status: HTTPResponse.Status = error.code == .unknownReference && pointers.contains(error.pointer.description) ? .notFound : .badRequest
            throw ServiceError(error, status: status)
        } catch let error as ServiceError {
            throw error
        } catch let refusal as any VendorRefusal {
            throw refusal  // a vendor route's refusal, made inside a write
        } catch {
            let answer = ServiceError.store(error)
            if answer.status == .serviceUnavailable {
                logger.warning("store unavailable", metadata: ["error": "\(error)"])
            } else {
                logger.error("store failure", metadata: ["error": "\(error)"])
            }
            throw answer
        }
    }

    /// Reads input synchronously: bad input → 400 with its pointer.
    func checking<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as InputError {
            throw ServiceError(error)
        }
    }

    /// A JSON response.
    package func json(_ bytes: [UInt8], status: HTTPResponse.Status = .ok) -> Response {
        Response(status: status, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
    }

    package func json(_ value: JSONValue, status: HTTPResponse.Status = .ok) -> Response {
        var w = JSONWriter()
        w.write(value)
        return json(w.bytes, status: status)
    }
}

extension Request {
    /// The key of `Authorization: Bearer <key>`.
    package var bearerKey: String? {
        guard let header = headers[.authorization] else { return nil }
        // On every request: bytes, not Foundation's string functions. "Bearer" in any case, then spaces.
        let bytes = header.utf8
        guard bytes.count > 7 else { return nil }
        var i = bytes.startIndex
        for expected in "bearer".utf8 {
            guard bytes[i] | 0x20 == expected else { return nil }
            i = bytes.index(after: i)
        }
        guard bytes[i] == UInt8(ascii: " ") else { return nil }
        var start = i
        while start < bytes.endIndex && bytes[start] == UInt8(ascii: " ") { start = bytes.index(after: start) }
        var end = bytes.endIndex
        while end > start && bytes[bytes.index(before: end)] == UInt8(ascii: " ") { end = bytes.index(before: end) }
        return start < end ? String(header[start..<end]) : nil
    }
}

extension JSONWriter {
    /// A string as a JSON string literal, for `found` in errors.
    package static func quoted(_ text: String) -> String {
        var w = JSONWriter(capacity: text.utf8.count + 2)
        w.string(text)
        return w.string
    }
}
