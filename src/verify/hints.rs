pub fn hints() {}
