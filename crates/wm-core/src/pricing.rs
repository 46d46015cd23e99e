//! The shipped rate card: what one template message costs per destination market and
//! category, and how a phone number finds its market.
//!
//! A market is either a country with its own row (ISO 3166-1 alpha-2 code, `MX`) or a
//! regional group (`ROW_LATAM`, "Rest of Latin America"); every ISO region the phone
//! metadata knows belongs to exactly one market, and a region without a row or a group is
//! priced as `OTHER`. A number is routed by its country calling code, read from the
//! `phonenumber` crate's metadata; the number does not have to be a *valid* number of that
//! country (old Mexican mobiles such as `+5215512345678` are priced as Mexico). A number
//! whose prefix is no calling code at all has no market: it is unpriceable.
//!
//! Lookups are table look-ups only (calling code → region → market), precomputed once, so
//! pricing a 20,000-recipient audience takes a few milliseconds.

use std::collections::HashMap;
use std::sync::LazyLock;

use chrono::NaiveDate;
use phonenumber::metadata::{DATABASE, Metadata};
use wm_types::Money;
use wm_types::campaigns::TemplateCategory;

use crate::phone::Phone;

mod shipped;

pub use shipped::OTHER;
use shipped::{GROUPS, SHIPPED, SHIPPED_EFFECTIVE};

/// The price of one template message to one market.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MarketRate {
    /// Market code: an ISO 3166-1 alpha-2 code (`MX`) or a group code (`ROW_LATAM`).
    pub market: String,
    /// For people (`Mexico`, `Rest of Latin America`).
    pub label: String,
    /// Price of a MARKETING message.
    pub marketing: Money,
    /// Price of a UTILITY message.
    pub utility: Money,
    /// Price of an AUTHENTICATION message.
    pub authentication: Money,
    /// Since when these prices apply.
    pub effective_from: NaiveDate,
}

impl MarketRate {
    /// The price of one message of `category` (an unknown category pays the marketing price).
    pub fn price(&self, category: TemplateCategory) -> Money {
        match category {
            TemplateCategory::Utility => self.utility,
            TemplateCategory::Authentication => self.authentication,
            _ => self.marketing,
        }
    }
}

/// The metadata's region id of numbers that belong to no country (`+800`, `+882`, …).
const NON_GEOGRAPHIC: &str = "001";

/// Region → the market it is priced as when it has no row of its own.
static GROUP_OF: LazyLock<HashMap<&'static str, &'static str>> = LazyLock::new(|| {
    GROUPS
        .iter()
        .flat_map(|(group, regions)| regions.iter().map(move |r| (*r, *group)))
        .collect()
});

/// How the region of a number with a given calling code is found.
#[derive(Debug)]
enum Route {
    /// The code belongs to one region (`None`: a non-geographic code).
    Single(Option<&'static str>),
    /// NANP (+1): the region of each three-digit area code.
    Nanp(Box<[&'static str]>),
    /// Several regions share the code; the metadata's leading digits decide.
    Shared(Vec<&'static str>),
}

/// Calling code → route, from the phone metadata (independent of prices).
static ROUTES: LazyLock<HashMap<u16, Route>> = LazyLock::new(build_routes);

fn build_routes() -> HashMap<u16, Route> {
    let database: &'static phonenumber::metadata::Database = &DATABASE;
    // Every calling code has one to three digits. (The database's `iter` yields one entry
    // per region id, so it would show only one of the non-geographic "001" codes.)
    (1..1000u16)
        .filter_map(|code| {
            let regions = database.region(&code)?;
            let route = match regions.as_slice() {
                [] => return None,
                [one] => Route::Single((*one != NON_GEOGRAPHIC).then_some(*one)),
                _ if code == 1 => Route::Nanp(nanp_table(&regions)),
                _ => Route::Shared(regions),
            };
            Some((code, route))
        })
        .collect()
}

/// The region of every NANP area code (`"US"` when the metadata cannot tell).
fn nanp_table(regions: &[&'static str]) -> Box<[&'static str]> {
    (0..1000u32)
        .map(|area| {
            if area < 200 {
                // No NANP area code starts with 0 or 1.
                return "US";
            }
            // Two subscriber numbers, in case one is outside a region's number plan.
            ["2345678", "5550123"]
                .iter()
                .find_map(|rest| shared_region(regions, &format!("{area:03}{rest}")))
                .unwrap_or("US")
        })
        .collect()
}

/// Which of the regions sharing a calling code a national number belongs to, the way
/// libphonenumber decides it: a region's leading digits when it lists them, else whether
/// one of its number patterns matches. `None` when none claims it.
fn shared_region(regions: &[&'static str], national: &str) -> Option<&'static str> {
    let database: &'static phonenumber::metadata::Database = &DATABASE;
    regions.iter().copied().find(|region| {
        let Some(meta) = database.by_id(*region) else {
            return false;
        };
        match meta.leading_digits() {
            Some(pattern) => pattern.find(national).is_some_and(|m| m.start() == 0),
            None => matches_any_type(meta, national),
        }
    })
}

fn matches_any_type(meta: &Metadata, national: &str) -> bool {
    use phonenumber::Type;
    let d = meta.descriptors();
    d.general().is_match(national)
        && [
            Type::FixedLine,
            Type::Mobile,
            Type::TollFree,
            Type::PremiumRate,
            Type::SharedCost,
            Type::Voip,
            Type::PersonalNumber,
            Type::Pager,
            Type::Uan,
            Type::Voicemail,
        ]
        .into_iter()
        .any(|t| d.get(t).is_some_and(|desc| desc.is_match(national)))
}

/// The calling code at the start of `digits` (codes are prefix-free) and the rest.
fn split_calling_code(digits: &str) -> Option<(u16, &Route, &str)> {
    (1..=3).find_map(|len| {
        let code: u16 = digits.get(..len)?.parse().ok()?;
        let route = ROUTES.get(&code)?;
        Some((code, route, &digits[len..]))
    })
}

/// A set of market prices and the routing of regions to them.
#[derive(Debug, Clone)]
pub struct RateCard {
    markets: Vec<MarketRate>,
    by_code: HashMap<String, usize>,
    /// Every region of the metadata → its market.
    by_region: HashMap<&'static str, usize>,
    /// Shared calling codes whose regions are all priced alike → that market.
    uniform: HashMap<u16, usize>,
    /// The `OTHER` market.
    other: usize,
}

static SHIPPED_CARD: LazyLock<RateCard> = LazyLock::new(|| RateCard::new(shipped_rates()));

fn shipped_rates() -> Vec<MarketRate> {
    let (y, m, d) = SHIPPED_EFFECTIVE;
    let effective_from = NaiveDate::from_ymd_opt(y, m, d).unwrap_or_default();
    SHIPPED
        .iter()
        .map(
            |&(market, label, marketing, utility, authentication)| MarketRate {
                market: market.to_owned(),
                label: label.to_owned(),
                marketing: Money(marketing),
                utility: Money(utility),
                authentication: Money(authentication),
                effective_from,
            },
        )
        .collect()
}

impl RateCard {
    /// The card shipped with the service.
    pub fn shipped() -> &'static RateCard {
        &SHIPPED_CARD
    }

    /// Per-organisation overrides replace (or add) whole markets by code.
    ///
    /// An added market whose code is an ISO region (`AT`) takes that region out of its
    /// group; any other added code is reachable only through [`RateCard::market`].
    pub fn with_overrides(&self, overrides: &[MarketRate]) -> RateCard {
        let mut markets = self.markets.clone();
        for o in overrides {
            match markets.iter_mut().find(|m| m.market == o.market) {
                Some(m) => *m = o.clone(),
                None => markets.push(o.clone()),
            }
        }
        RateCard::new(markets)
    }

    /// The market of a phone (longest calling-code prefix); None = unpriceable.
    pub fn market_for(&self, phone: &Phone) -> Option<&MarketRate> {
        let digits = phone.as_str().strip_prefix('+')?;
        let (code, route, national) = split_calling_code(digits)?;
        let region = match route {
            Route::Single(region) => *region,
            Route::Nanp(table) => Some(
                national
                    .get(..3)
                    .and_then(|a| a.parse::<usize>().ok())
                    .and_then(|a| table.get(a).copied())
                    .unwrap_or("US"),
            ),
            Route::Shared(regions) => {
                if let Some(&i) = self.uniform.get(&code) {
                    return self.markets.get(i);
                }
                shared_region(regions, national).or_else(|| regions.first().copied())
            }
        };
        let index = region
            .and_then(|r| self.by_region.get(r).copied())
            .unwrap_or(self.other);
        self.markets.get(index)
    }

    /// The market of an address: a phone's by its calling code, a platform id's by the
    /// country it is prefixed with (its region's market, else `OTHER`); None = unpriceable.
    pub fn market_for_address(&self, to: &crate::address::Address) -> Option<&MarketRate> {
        match to {
            crate::address::Address::Phone(phone) => self.market_for(phone),
            other => {
                let region = other.country()?;
                let index = self.by_region.get(region).copied().unwrap_or(self.other);
                self.markets.get(index)
            }
        }
    }

    /// A market by code.
    pub fn market(&self, code: &str) -> Option<&MarketRate> {
        self.by_code.get(code).and_then(|&i| self.markets.get(i))
    }

    /// Every market of the card, in the card's order.
    pub fn markets(&self) -> &[MarketRate] {
        &self.markets
    }

    /// Builds the routing of a card; `markets` always holds [`OTHER`] (the shipped card has
    /// it and overrides only replace or add).
    fn new(markets: Vec<MarketRate>) -> RateCard {
        let by_code: HashMap<String, usize> = markets
            .iter()
            .enumerate()
            .map(|(i, m)| (m.market.clone(), i))
            .collect();
        let other = by_code.get(OTHER).copied().unwrap_or_default();
        let database: &'static phonenumber::metadata::Database = &DATABASE;
        let by_region: HashMap<&'static str, usize> = database
            .iter()
            .map(Metadata::id)
            .filter(|region| *region != NON_GEOGRAPHIC)
            .map(|region| {
                let market = by_code
                    .get(region)
                    .or_else(|| GROUP_OF.get(region).and_then(|g| by_code.get(*g)))
                    .copied()
                    .unwrap_or(other);
                (region, market)
            })
            .collect();
        let uniform = ROUTES
            .iter()
            .filter_map(|(code, route)| {
                let Route::Shared(regions) = route else {
                    return None;
                };
                let mut priced_as = regions
                    .iter()
                    .map(|r| by_region.get(r).copied().unwrap_or(other));
                let first = priced_as.next()?;
                priced_as.all(|m| m == first).then_some((*code, first))
            })
            .collect();
        RateCard {
            markets,
            by_code,
            by_region,
            uniform,
            other,
        }
    }
}

/// How many of `count` UTILITY messages the monthly allowance covers.
pub fn allowance_covered(included_per_month: u64, used_this_month: u64, count: u64) -> u64 {
    included_per_month
        .saturating_sub(used_this_month)
        .min(count)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn market(phone: &str) -> Option<String> {
        let p = Phone::parse(phone).unwrap();
        RateCard::shipped().market_for(&p).map(|m| m.market.clone())
    }

    fn rate(code: &str, marketing: i64) -> MarketRate {
        MarketRate {
            market: code.to_owned(),
            label: code.to_owned(),
            marketing: Money(marketing),
            utility: Money(marketing / 2),
            authentication: Money(marketing / 3),
            effective_from: NaiveDate::from_ymd_opt(2027, 1, 1).unwrap(),
        }
    }

    #[test]
    fn countries_with_a_row_are_their_own_market() {
        assert_eq!(market("+525512345678").as_deref(), Some("MX"));
        assert_eq!(market("+5511987654321").as_deref(), Some("BR"));
        assert_eq!(market("+34612345678").as_deref(), Some("ES"));
        assert_eq!(market("+447700900123").as_deref(), Some("GB"));
        assert_eq!(market("+4915123456789").as_deref(), Some("DE"));
    }

    #[test]
    fn an_old_mexican_mobile_is_still_mexico() {
        assert_eq!(market("+5215512345678").as_deref(), Some("MX"));
    }

    #[test]
    fn nanp_splits_by_area_code() {
        assert_eq!(market("+12125551234").as_deref(), Some("NORTH_AMERICA"));
        assert_eq!(market("+14165551234").as_deref(), Some("NORTH_AMERICA"));
        assert_eq!(market("+18095551234").as_deref(), Some("ROW_LATAM"));
        assert_eq!(market("+17875551234").as_deref(), Some("ROW_LATAM"));
        // Antigua has no row nor group: Other.
        assert_eq!(market("+12684601234").as_deref(), Some(OTHER));
        let routes = &ROUTES;
        let Some(Route::Nanp(table)) = routes.get(&1) else {
            panic!("+1 is NANP")
        };
        assert_eq!(table[416], "CA");
        assert_eq!(table[212], "US");
        assert_eq!(table[809], "DO");
        assert_eq!(table[0], "US");
    }

    #[test]
    fn regions_without_a_row_go_to_their_group() {
        assert_eq!(market("+541123456789").as_deref(), Some("AR"));
        assert_eq!(market("+59171234567").as_deref(), Some("ROW_LATAM"));
        assert_eq!(market("+4312345678").as_deref(), Some("ROW_WE"));
        assert_eq!(market("+81312345678").as_deref(), Some("ROW_APAC"));
        assert_eq!(market("+254712345678").as_deref(), Some("ROW_AFRICA"));
        assert_eq!(market("+962791234567").as_deref(), Some("ROW_ME"));
        assert_eq!(market("+420601123456").as_deref(), Some("ROW_CEE"));
    }

    #[test]
    fn shared_codes_follow_the_metadata() {
        assert_eq!(market("+79161234567").as_deref(), Some("RU"));
        assert_eq!(market("+77011234567").as_deref(), Some("KZ"));
        assert_eq!(market("+441481123456").as_deref(), Some("GB"));
        assert_eq!(market("+358181234567").as_deref(), Some("ROW_WE"));
    }

    #[test]
    fn a_calling_code_without_a_row_or_group_is_other() {
        // Iceland, Fiji, the non-geographic +882 and +979.
        assert_eq!(market("+3545512345").as_deref(), Some(OTHER));
        assert_eq!(market("+6797012345").as_deref(), Some(OTHER));
        assert_eq!(market("+88213123456").as_deref(), Some(OTHER));
        assert_eq!(market("+979123456789").as_deref(), Some(OTHER));
    }

    #[test]
    fn an_unknown_prefix_is_unpriceable() {
        assert_eq!(market("+99912345678"), None);
        assert_eq!(market("+2101234567"), None);
    }

    #[test]
    fn prices_are_micro_units_by_category() {
        let mx = RateCard::shipped().market("MX").unwrap();
        assert_eq!(mx.label, "Mexico");
        assert_eq!(mx.price(TemplateCategory::Marketing), Money(39_700));
        assert_eq!(mx.price(TemplateCategory::Utility), Money(8_500));
        assert_eq!(mx.price(TemplateCategory::Authentication), Money(8_500));
        assert_eq!(mx.price(TemplateCategory::Unknown), Money(39_700));
        assert_eq!(mx.effective_from.to_string(), "2026-10-01");
        assert!(RateCard::shipped().market("XX").is_none());
    }

    #[test]
    fn every_code_of_the_card_is_a_known_region_or_group() {
        let database: &phonenumber::metadata::Database = &DATABASE;
        let groups: Vec<&str> = GROUPS.iter().map(|(g, _)| *g).collect();
        for (code, ..) in SHIPPED {
            assert!(
                database.by_id(*code).is_some() || groups.contains(code) || *code == OTHER,
                "{code}"
            );
        }
        for (group, regions) in GROUPS {
            assert!(RateCard::shipped().market(group).is_some(), "{group}");
            for r in *regions {
                assert!(database.by_id(*r).is_some(), "{r}");
                assert!(RateCard::shipped().market(r).is_none(), "{r} has a row");
            }
        }
        let mut seen = std::collections::HashSet::new();
        for (code, ..) in SHIPPED {
            assert!(seen.insert(*code), "duplicate {code}");
        }
    }

    #[test]
    fn overrides_replace_and_add_markets() {
        let card = RateCard::shipped().with_overrides(&[rate("MX", 1_000), rate("AT", 2_000)]);
        let mx = Phone::parse("+525512345678").unwrap();
        let at = Phone::parse("+4312345678").unwrap();
        let be = Phone::parse("+3212345678").unwrap();
        assert_eq!(card.market_for(&mx).unwrap().marketing, Money(1_000));
        assert_eq!(card.market_for(&at).unwrap().market, "AT");
        assert_eq!(card.market_for(&be).unwrap().market, "ROW_WE");
        assert_eq!(card.market("AT").unwrap().utility, Money(1_000));
        // The shipped card is untouched.
        let shipped = RateCard::shipped();
        assert_eq!(shipped.market_for(&mx).unwrap().marketing, Money(39_700));
        assert_eq!(shipped.market_for(&at).unwrap().market, "ROW_WE");
        // Overriding a group re-prices its members; a shared code splits when needed.
        let card = shipped.with_overrides(&[rate("ROW_WE", 5), rate("SJ", 7)]);
        assert_eq!(card.market_for(&be).unwrap().marketing, Money(5));
        let svalbard = Phone::parse("+4779123456").unwrap();
        let oslo = Phone::parse("+4721234567").unwrap();
        assert_eq!(card.market_for(&svalbard).unwrap().market, "SJ");
        assert_eq!(card.market_for(&oslo).unwrap().market, "ROW_WE");
    }

    #[test]
    fn the_card_is_shareable() {
        fn assert_traits<T: Clone + std::fmt::Debug + Send + Sync>() {}
        assert_traits::<RateCard>();
        assert_traits::<MarketRate>();
    }

    #[test]
    fn twenty_thousand_lookups_are_fast() {
        let phones: Vec<Phone> = (0..20_000u64)
            .map(|i| {
                let prefix =
                    ["+52155", "+1416", "+7916", "+44770", "+3461", "+99912"][i as usize % 6];
                Phone::parse(&format!("{prefix}{:07}", i)).unwrap()
            })
            .collect();
        let card = RateCard::shipped();
        let _ = card.market_for(&phones[0]);
        let start = std::time::Instant::now();
        let priced = phones
            .iter()
            .filter(|p| card.market_for(p).is_some())
            .count();
        let elapsed = start.elapsed();
        // Every sixth number (+999…) has no calling code.
        assert_eq!(priced, 16_667);
        // Generous bound for unoptimised test builds; release builds take a few ms.
        assert!(elapsed.as_millis() < 1_000, "{elapsed:?}");
    }

    #[test]
    fn allowance_covers_what_is_left() {
        assert_eq!(allowance_covered(1000, 0, 10), 10);
        assert_eq!(allowance_covered(1000, 995, 10), 5);
        assert_eq!(allowance_covered(1000, 1000, 10), 0);
        assert_eq!(allowance_covered(1000, 2000, 10), 0);
        assert_eq!(allowance_covered(0, 0, 10), 0);
        assert_eq!(allowance_covered(10, 0, 0), 0);
        assert_eq!(allowance_covered(u64::MAX, 0, u64::MAX), u64::MAX);
    }
}
