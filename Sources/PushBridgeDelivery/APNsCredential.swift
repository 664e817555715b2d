import Crypto
import Foundation
import NIOSSL

/// How PushBridge authenticates to APNs for some topics (bundle ids): a provider token signed with
/// a `.p8` key, or a TLS client certificate (Specification §13). Secrets are read from files; their
/// contents never appear in errors or logs.
public struct APNsCredential: Sendable {
    /// Where a credential's secret lives.
    public enum Source: Sendable, Hashable {
        /// Token auth: the `.p8` key file, its key id and the team id.
        case token(keyFile: String, keyID: String, teamID: String)
        /// Certificate auth with PEM files: the certificate (chain) and its private key (the same
        /// file when `privateKeyFile` is `nil`).
        case certificate(certificateFile: String, privateKeyFile: String?)
        /// Certificate auth with a `.p12` bundle and the file holding its password (none: no password).
        case pkcs12(file: String, passwordFile: String?)
    }

    /// What the credential does, once loaded.
    public enum Kind: Sendable {
        case token(ProviderTokenSigner)
        case certificate(chain: [NIOSSLCertificate], key: NIOSSLPrivateKey)
    }

    /// The topics (bundle ids) it serves; `*` serves every topic no other credential names.
    public var topics: [String]
    public var kind: Kind
    /// A label for logs and errors: the key id, or the certificate file's name (never a secret).
    public var label: String

    /// Loads a credential's files.
    /// - Parameters:
    ///   - topics: the bundle ids it serves (`*` for any).
    ///   - source: where its secret is.
    ///   - tokenRefreshSeconds: how long a provider token is reused.
    /// - Throws: ``DeliveryError`` naming the file that cannot be used.
    public init(topics: [String], source: Source, tokenRefreshSeconds: Int64 = 50 * 60) throws {
        self.topics = topics
        switch source {
        case .token(let keyFile, let keyID, let teamID):
            let pem = try Self.text(keyFile)
            guard let key = try? P256.Signing.PrivateKey(pemRepresentation: pem) else {
                throw DeliveryError(.badCredential, subject: keyFile, expected: "an APNs auth key (.p8: a PEM P-256 private key)")
            }
            guard keyID.count == 10, teamID.count == 10 else {
                throw DeliveryError(.badCredential, subject: keyFile, expected: "a 10-character key id and a 10-character team id")
            }
            kind = .token(ProviderTokenSigner(key: key, keyID: keyID, teamID: teamID, refreshSeconds: tokenRefreshSeconds))
            label = "key \(keyID)"
        case .certificate(let certificateFile, let privateKeyFile):
            _ = try Self.text(certificateFile)
            guard let chain = try? NIOSSLCertificate.fromPEMFile(certificateFile), !chain.isEmpty else {
                throw DeliveryError(.badCredential, subject: certificateFile, expected: "a PEM certificate")
            }
            let keyFile = privateKeyFile ?? certificateFile
            _ = try Self.text(keyFile)
            guard let key = try? NIOSSLPrivateKey(file: keyFile, format: .pem) else {
                throw DeliveryError(.badCredential, subject: keyFile, expected: "a PEM private key")
            }
            kind = .certificate(chain: chain, key: key)
            label = "certificate \((certificateFile as NSString).lastPathComponent)"
        case .pkcs12(let file, let passwordFile):
            let password = try passwordFile.map { try Self.text($0).trimmingCharacters(in: .newlines) } ?? ""
            guard let data = FileManager.default.contents(atPath: file) else {
                throw DeliveryError(.unreadableFile, subject: file, expected: "a readable .p12 file")
            }
            guard let bundle = try? NIOSSLPKCS12Bundle(buffer: Array(data), passphrase: Array(password.utf8)) else {
                throw DeliveryError(.badCredential, subject: file, expected: "a .p12 bundle that opens with the password in its password file")
            }
            kind = .certificate(chain: bundle.certificateChain, key: bundle.privateKey)
            label = "certificate \((file as NSString).lastPathComponent)"
        }
    }

    /// Whether it serves a topic by name (not through `*`).
    func names(_ topic: String) -> Bool { topics.contains(topic) }

    static func text(_ file: String) throws -> String {
        guard let data = FileManager.default.contents(atPath: file) else {
            throw DeliveryError(.unreadableFile, subject: file, expected: "a readable file")
        }
        return String(decoding: data, as: UTF8.self)
    }
}
