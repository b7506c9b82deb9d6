extension String {
  /// Whether `other` is this text byte for byte. Swift's `==` takes
  /// canonically equivalent texts as equal ("\u{212A}im", KELVIN SIGN, and
  /// "Kim"), but the log keeps bytes: a sender, or an edit's text, is
  /// another one when its bytes are.
  package func hasSameBytes(as other: String) -> Bool {
    utf8.elementsEqual(other.utf8)
  }
}
