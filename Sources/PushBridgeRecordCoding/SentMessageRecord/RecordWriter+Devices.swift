import PushBridgeCore

// The parts of a sent-message record that are the core's values: devices with their
// certificates, and suppression reasons written as words (`PBR1`, `PBR2`).

extension RecordWriter {
    /// A device: its token, its certificate's number (the fields at its first use) and its binding time.
    mutating func device(_ device: Device, certificates: inout SentMessageRecord.Numbering<Certificate>) {
        token(device.token)
        let (number, isNew) = certificates.number(of: device.certificate)
        varint(UInt64(number))
        if isNew {
            optional(device.certificate.name)
            optional(device.certificate.busiId)
            string(device.certificate.bundleId)
            string(device.certificate.environment.rawValue)
        }
        signed(device.boundAt.milliseconds)
    }
}

extension RecordReader {
    /// A suppressed decision, its reason word read.
    func suppressed(_ receiver: String, reason word: String) throws(RecordDamage) -> ReceiverDecision {
        guard let reason = SuppressionReason(rawValue: word) else { throw damage("reason \"\(word)\" of \(receiver)") }
        return ReceiverDecision(receiver: receiver, decision: .suppressed(reason))
    }

    /// The rest of a device written by ``RecordWriter/device(_:certificates:)``, its token read.
    mutating func device(token: String, certificates: inout [Certificate], of receiver: String) throws(RecordDamage) -> Device {
        let number = try varint()
        if number == UInt64(certificates.count) {
            let name = try optional { r throws(RecordDamage) in try r.varint() }
            let busiId = try optional { r throws(RecordDamage) in try r.varint() }
            let bundleId = try string(length: varint())
            let environmentWord = try string(length: varint())
            guard let environment = APNsEnvironment(rawValue: environmentWord) else { throw damage("environment of \(receiver)") }
            certificates.append(Certificate(name: name, busiId: busiId, bundleId: bundleId, environment: environment))
        }
        guard number < UInt64(certificates.count) else { throw damage("certificate \(number) of \(receiver)") }
        return Device(token: token, certificate: certificates[Int(number)], boundAt: Instant(milliseconds: try signed()))
    }
}
