/// This version of msglog: `msglog --version`, the manual's header.
let msglogVersion = "0.2.0"
