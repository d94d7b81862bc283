extension UInt8 {
    /// This byte with an ASCII capital letter made lower case; every other byte, a UTF-8 byte of a
    /// non-ASCII character included, as it is.
    @inline(__always) var asciiLowercased: UInt8 { (self &- 0x41) < 26 ? self | 0x20 : self }
}
