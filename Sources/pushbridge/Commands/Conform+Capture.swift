import ArgumentParser
import Crypto
import Foundation
import PushBridgeAPNsMock
import PushBridgeServiceConformance

extension Conform {
    /// The capture's CA: read from `file` and `file.key` when both are there, else made and written
    /// (the key mode 0600). Returns it and whether it was made now.
    func captureAuthority(_ file: String) throws -> (MockAPNsIdentity.Authority, made: Bool) {
        let keyFile = file + ".key"
        let manager = FileManager.default
        if manager.fileExists(atPath: file) || manager.fileExists(atPath: keyFile) {
            guard let certificate = manager.contents(atPath: file), let key = manager.contents(atPath: keyFile) else {
                printError("pushbridge: --capture-ca-out: expected \(file) and \(keyFile) both (a CA and its key), found one of them [unreadable-file]")
                throw ExitCode(2)
            }
            let authority = MockAPNsIdentity.Authority(certificatePEM: String(decoding: certificate, as: UTF8.self), privateKeyPEM: String(decoding: key, as: UTF8.self))
            do {
                _ = try authority.issue(for: ["127.0.0.1"])
            } catch {
                printError("pushbridge: --capture-ca-out: expected a CA certificate and its P-256 key (PEM) made by pushbridge, found ones that cannot sign [invalid-value]")
                throw ExitCode(2)
            }
            return (authority, false)
        }
        let authority = try MockAPNsIdentity.Authority.generate()
        guard manager.createFile(atPath: keyFile, contents: Data(authority.privateKeyPEM.utf8), attributes: [.posixPermissions: 0o600]),
            manager.createFile(atPath: file, contents: Data(authority.certificatePEM.utf8))
        else {
            printError("pushbridge: --capture-ca-out: expected a writable file, found \"\(file)\" [unreadable-file]")
            throw ExitCode(2)
        }
        return (authority, true)
    }

    /// Starts the APNs capture at `HOST:PORT` and says where it listens and which CA to trust.
    func startCapture(_ address: String) async throws -> APNsCapture {
        let parts = address.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, let port = Int(parts[1]), (0...65535).contains(port) else {
            printError("pushbridge: --capture-apns: expected HOST:PORT such as 127.0.0.1:8443, found \"\(address)\" [invalid-value]")
            throw ExitCode(2)
        }
        let authority = try captureCaOut.map { try captureAuthority($0).0 }
        var providerKey: P256.Signing.PublicKey?
        if let captureJwtKey {
            guard let data = FileManager.default.contents(atPath: captureJwtKey) else {
                printError("pushbridge: --capture-jwt-key: expected a readable file, found \"\(captureJwtKey)\" [unreadable-file]")
                throw ExitCode(2)
            }
            let pem = String(decoding: data, as: UTF8.self)
            guard let key = (try? P256.Signing.PublicKey(pemRepresentation: pem)) ?? (try? P256.Signing.PrivateKey(pemRepresentation: pem))?.publicKey else {
                printError("pushbridge: --capture-jwt-key: expected a P-256 public key or an APNs .p8 key (PEM) in \(captureJwtKey) [invalid-value]")
                throw ExitCode(2)
            }
            providerKey = key
        }
        do {
            let capture = try await APNsCapture.start(host: String(parts[0]), port: port, authority: authority, providerKey: providerKey)
            printError("pushbridge: capturing APNs requests at \(capture.baseURL)" + (captureCaOut.map { " (trust \($0))" } ?? " (its CA was made for this run: give --capture-ca-out FILE to keep one)"))
            return capture
        } catch {
            printError("pushbridge: --capture-apns: expected an address to listen on, found \"\(address)\" (\(error)) [unreachable]")
            throw ExitCode(2)
        }
    }

    /// Writes what the capture saw (`APNsCapture.log`) to `file`.
    func writeCaptureLog(_ capture: APNsCapture, to file: String) throws {
        guard FileManager.default.createFile(atPath: file, contents: Data(capture.log.utf8)) else {
            printError("pushbridge: --capture-log: expected a writable file, found \"\(file)\" [unreadable-file]")
            throw ExitCode(2)
        }
    }
}
