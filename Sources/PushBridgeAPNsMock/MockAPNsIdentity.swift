import Crypto
import Foundation
import SwiftASN1
import X509

/// The TLS identity a mock APNs presents: its certificate, its private key, and the CA that signed
/// it (what a client under test must trust).
public struct MockAPNsIdentity: Sendable {
    /// The CA certificate (PEM): what the client under test trusts.
    public let caCertificatePEM: String
    /// The server certificate (PEM), signed by the CA.
    public let certificatePEM: String
    /// The server certificate's private key (PEM).
    public let privateKeyPEM: String

    /// - Parameters: the three PEM texts above.
    public init(caCertificatePEM: String, certificatePEM: String, privateKeyPEM: String) {
        self.caCertificatePEM = caCertificatePEM
        self.certificatePEM = certificatePEM
        self.privateKeyPEM = privateKeyPEM
    }

    /// The fixed test identity (``MockAPNsCredentials``: `localhost` and `127.0.0.1`), for tests
    /// in this repository. Its CA key is public: never make a real server trust it.
    public static let test = MockAPNsIdentity(
        caCertificatePEM: MockAPNsCredentials.caCertificatePEM, certificatePEM: MockAPNsCredentials.serverCertificatePEM,
        privateKeyPEM: MockAPNsCredentials.serverPrivateKeyPEM)

    /// A CA of one's own: its certificate and key (PEM), to sign server certificates with.
    public struct Authority: Sendable {
        /// The CA certificate (PEM).
        public let certificatePEM: String
        /// The CA's private key (PEM, P-256): keep it private (the capture writes it mode 0600).
        public let privateKeyPEM: String

        /// - Parameters: the CA certificate and key (PEM).
        public init(certificatePEM: String, privateKeyPEM: String) {
            self.certificatePEM = certificatePEM
            self.privateKeyPEM = privateKeyPEM
        }

        /// A new CA (P-256, valid for ten years), named after its purpose and a random serial.
        public static func generate() throws -> Authority {
            let key = P256.Signing.PrivateKey()
            let name = try DistinguishedName {
                OrganizationName("PushBridge conformance")
                CommonName("PushBridge APNs capture CA")
            }
            let now = Date()
            let certificate = try Certificate(
                version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: Certificate.PublicKey(key.publicKey),
                notValidBefore: now.addingTimeInterval(-3600), notValidAfter: now.addingTimeInterval(10 * 365 * 86400),
                issuer: name, subject: name, signatureAlgorithm: .ecdsaWithSHA256,
                extensions: try Certificate.Extensions {
                    Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                    Critical(KeyUsage(keyCertSign: true, cRLSign: true))
                },
                issuerPrivateKey: Certificate.PrivateKey(key))
            return Authority(certificatePEM: try certificate.serializeAsPEM().pemString, privateKeyPEM: key.pemRepresentation)
        }

        /// A server identity signed by this CA for the hosts (IPv4 addresses or DNS names), valid
        /// for thirty days.
        /// - Parameter hosts: the names a client connects by, such as `["127.0.0.1", "localhost"]`.
        public func issue(for hosts: [String]) throws -> MockAPNsIdentity {
            let caKey = try P256.Signing.PrivateKey(pemRepresentation: privateKeyPEM)
            let ca = try Certificate(pemEncoded: certificatePEM)
            let key = P256.Signing.PrivateKey()
            let names: [GeneralName] = hosts.map { host in
                let octets = host.split(separator: ".", omittingEmptySubsequences: false).compactMap { UInt8($0) }
                return octets.count == 4 ? .ipAddress(ASN1OctetString(contentBytes: ArraySlice(octets))) : .dnsName(host)
            }
            let now = Date()
            let certificate = try Certificate(
                version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: Certificate.PublicKey(key.publicKey),
                notValidBefore: now.addingTimeInterval(-3600), notValidAfter: now.addingTimeInterval(30 * 86400),
                issuer: ca.subject, subject: try DistinguishedName { CommonName(hosts.first ?? "localhost") }, signatureAlgorithm: .ecdsaWithSHA256,
                extensions: try Certificate.Extensions {
                    Critical(BasicConstraints.notCertificateAuthority)
                    Critical(KeyUsage(digitalSignature: true))
                    try ExtendedKeyUsage([.serverAuth])
                    SubjectAlternativeNames(names)
                },
                issuerPrivateKey: Certificate.PrivateKey(caKey))
            return MockAPNsIdentity(
                caCertificatePEM: certificatePEM, certificatePEM: try certificate.serializeAsPEM().pemString, privateKeyPEM: key.pemRepresentation)
        }
    }
}
