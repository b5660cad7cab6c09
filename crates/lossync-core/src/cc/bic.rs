//! placeholder until the variant lands
pub const VARIANT: super::Variant = super::reno::VARIANT;
