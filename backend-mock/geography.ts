/**
 * The reference geography the generator draws from: twelve countries with their currency, a
 * price level, and real localities (region, approximate centre, postal-code shapes). Kept apart
 * from the generator so the numbers that make the data look plausible can be read and adjusted
 * without touching the generation logic.
 */

export interface Locality {
  name: string;
  region: string;
  latitude: number;
  longitude: number;
  /** Relative share of the country's listings (roughly follows city size). */
  weight: number;
  /** Multiplier on the country's price level (capitals and hot markets are dearer). */
  priceFactor: number;
  /** Postal-code shapes of the locality: `#` is a random digit, `@` a random letter, anything else literal. */
  postalCodes: readonly string[];
}

export interface Country {
  code: string;
  /** ISO 4217. */
  currency: string;
  /** Relative share of all listings: deliberately uneven, like a real portal. */
  weight: number;
  /** Typical asking price per m² of an apartment for sale, in the local currency. */
  salePerM2: number;
  /** Typical monthly rent per m² of an apartment, in the local currency. */
  rentPerM2: number;
  localities: readonly Locality[];
}

function place(
  name: string, region: string, latitude: number, longitude: number,
  weight: number, priceFactor: number, postalCodes: readonly string[],
): Locality {
  return { name, region, latitude, longitude, weight, priceFactor, postalCodes };
}

/** 75001 to 75020: Paris codes follow its twenty arrondissements (75000 does not exist). */
const PARIS_ARRONDISSEMENTS = Array.from({ length: 20 }, (_, i) => `750${String(i + 1).padStart(2, '0')}`);

export const COUNTRIES: readonly Country[] = [
  {
    code: 'GB', currency: 'GBP', weight: 20, salePerM2: 4000, rentPerM2: 17,
    localities: [
      place('London', 'Greater London', 51.5074, -0.1278, 30, 1.9, ['SW# #@@', 'SE# #@@', 'E# #@@', 'N# #@@', 'NW# #@@', 'W# #@@']),
      place('Manchester', 'Greater Manchester', 53.4808, -2.2426, 10, 0.9, ['M# #@@', 'M## #@@']),
      place('Birmingham', 'West Midlands', 52.4862, -1.8904, 10, 0.85, ['B# #@@', 'B## #@@']),
      place('Leeds', 'West Yorkshire', 53.8008, -1.5491, 7, 0.8, ['LS# #@@', 'LS## #@@']),
      place('Glasgow', 'Scotland', 55.8642, -4.2518, 7, 0.7, ['G# #@@', 'G## #@@']),
      place('Edinburgh', 'Scotland', 55.9533, -3.1883, 6, 1.05, ['EH# #@@', 'EH## #@@']),
      place('Bristol', 'South West England', 51.4545, -2.5879, 6, 1.1, ['BS# #@@', 'BS## #@@']),
      place('Liverpool', 'Merseyside', 53.4084, -2.9916, 6, 0.7, ['L# #@@', 'L## #@@']),
      place('Cardiff', 'Wales', 51.4816, -3.1791, 4, 0.8, ['CF# #@@', 'CF## #@@']),
      place('Newcastle upon Tyne', 'Tyne and Wear', 54.9783, -1.6178, 4, 0.7, ['NE# #@@']),
    ],
  },
  {
    code: 'FR', currency: 'EUR', weight: 15, salePerM2: 4000, rentPerM2: 15,
    localities: [
      place('Paris', 'Île-de-France', 48.8566, 2.3522, 25, 2.5, PARIS_ARRONDISSEMENTS),
      place('Lyon', 'Auvergne-Rhône-Alpes', 45.764, 4.8357, 10, 1.2, ['6900#']),
      place('Marseille', "Provence-Alpes-Côte d'Azur", 43.2965, 5.3698, 10, 0.95, ['1300#', '1301#']),
      place('Toulouse', 'Occitanie', 43.6047, 1.4442, 8, 0.9, ['3100#', '3120#', '3130#', '3140#', '3150#']),
      place('Nice', "Provence-Alpes-Côte d'Azur", 43.7102, 7.262, 6, 1.3, ['0600#', '0610#', '0620#', '0630#']),
      place('Nantes', 'Pays de la Loire', 47.2184, -1.5536, 6, 0.95, ['4400#', '4410#', '4420#', '4430#']),
      place('Bordeaux', 'Nouvelle-Aquitaine', 44.8378, -0.5792, 6, 1.1, ['3300#', '3310#', '3320#', '3330#', '3380#']),
      place('Lille', 'Hauts-de-France', 50.6292, 3.0573, 6, 0.9, ['5900#', '5980#']),
      place('Strasbourg', 'Grand Est', 48.5734, 7.7521, 5, 0.9, ['6700#', '6710#', '6720#']),
      place('Montpellier', 'Occitanie', 43.6108, 3.8767, 5, 0.95, ['3400#', '3407#', '3408#', '3409#']),
    ],
  },
  {
    code: 'DE', currency: 'EUR', weight: 15, salePerM2: 4200, rentPerM2: 13,
    localities: [
      place('Berlin', 'Berlin', 52.52, 13.405, 25, 1.2, ['10###', '12###', '13###']),
      place('Hamburg', 'Hamburg', 53.5511, 9.9937, 12, 1.3, ['20###', '21###', '22###']),
      place('München', 'Bayern', 48.1351, 11.582, 12, 2.0, ['80###', '81###']),
      place('Köln', 'Nordrhein-Westfalen', 50.9375, 6.9603, 9, 1.1, ['50###', '51###']),
      place('Frankfurt am Main', 'Hessen', 50.1109, 8.6821, 8, 1.4, ['60###', '65###']),
      place('Stuttgart', 'Baden-Württemberg', 48.7758, 9.1829, 7, 1.3, ['70###']),
      place('Düsseldorf', 'Nordrhein-Westfalen', 51.2277, 6.7735, 7, 1.15, ['40###']),
      place('Leipzig', 'Sachsen', 51.3397, 12.3731, 7, 0.65, ['04###']),
      place('Dresden', 'Sachsen', 51.0504, 13.7373, 6, 0.7, ['01###']),
      place('Hannover', 'Niedersachsen', 52.3759, 9.732, 7, 0.8, ['30###']),
    ],
  },
  {
    code: 'ES', currency: 'EUR', weight: 12, salePerM2: 2500, rentPerM2: 12,
    localities: [
      place('Madrid', 'Comunidad de Madrid', 40.4168, -3.7038, 25, 1.7, ['280##']),
      place('Barcelona', 'Cataluña', 41.3874, 2.1686, 20, 1.7, ['080##']),
      place('Valencia', 'Comunidad Valenciana', 39.4699, -0.3763, 12, 0.9, ['460##']),
      place('Sevilla', 'Andalucía', 37.3891, -5.9845, 10, 0.85, ['410##']),
      place('Málaga', 'Andalucía', 36.7213, -4.4214, 10, 1.2, ['290##']),
      place('Bilbao', 'País Vasco', 43.263, -2.935, 7, 1.3, ['480##']),
      place('Zaragoza', 'Aragón', 41.6488, -0.8891, 7, 0.75, ['500##']),
      place('Alicante', 'Comunidad Valenciana', 38.3452, -0.481, 5, 0.85, ['030##']),
      place('Palma', 'Islas Baleares', 39.5696, 2.6502, 5, 1.5, ['070##']),
    ],
  },
  {
    code: 'IT', currency: 'EUR', weight: 11, salePerM2: 2400, rentPerM2: 11,
    localities: [
      place('Roma', 'Lazio', 41.9028, 12.4964, 22, 1.4, ['001##']),
      place('Milano', 'Lombardia', 45.4642, 9.19, 20, 2.0, ['201##']),
      place('Napoli', 'Campania', 40.8518, 14.2681, 12, 0.9, ['801##']),
      place('Torino', 'Piemonte', 45.0703, 7.6869, 10, 0.75, ['101##']),
      place('Firenze', 'Toscana', 43.7696, 11.2558, 8, 1.6, ['501##']),
      place('Bologna', 'Emilia-Romagna', 44.4949, 11.3426, 8, 1.3, ['401##']),
      place('Genova', 'Liguria', 44.4056, 8.9463, 6, 0.8, ['161##']),
      place('Palermo', 'Sicilia', 38.1157, 13.3615, 6, 0.6, ['901##']),
      place('Venezia', 'Veneto', 45.4408, 12.3155, 4, 1.7, ['301##']),
      place('Verona', 'Veneto', 45.4384, 10.9916, 4, 1.0, ['371##']),
    ],
  },
  {
    code: 'NL', currency: 'EUR', weight: 6, salePerM2: 4800, rentPerM2: 18,
    localities: [
      place('Amsterdam', 'Noord-Holland', 52.3676, 4.9041, 30, 1.5, ['10## @@']),
      place('Rotterdam', 'Zuid-Holland', 51.9244, 4.4777, 18, 0.95, ['30## @@']),
      place('Den Haag', 'Zuid-Holland', 52.0705, 4.3007, 15, 1.0, ['25## @@']),
      place('Utrecht', 'Utrecht', 52.0907, 5.1214, 14, 1.15, ['35## @@']),
      place('Eindhoven', 'Noord-Brabant', 51.4416, 5.4697, 9, 0.85, ['56## @@']),
      place('Groningen', 'Groningen', 53.2194, 6.5665, 8, 0.75, ['97## @@']),
      place('Haarlem', 'Noord-Holland', 52.3874, 4.6462, 6, 1.1, ['20## @@']),
    ],
  },
  {
    code: 'PT', currency: 'EUR', weight: 4, salePerM2: 2800, rentPerM2: 13,
    localities: [
      place('Lisboa', 'Lisboa', 38.7223, -9.1393, 35, 1.6, ['1###-###']),
      place('Porto', 'Porto', 41.1579, -8.6291, 25, 1.2, ['4###-###']),
      place('Braga', 'Braga', 41.5454, -8.4265, 12, 0.7, ['47##-###']),
      place('Coimbra', 'Coimbra', 40.2033, -8.4103, 10, 0.65, ['30##-###']),
      place('Faro', 'Faro', 37.0194, -7.9322, 10, 1.1, ['80##-###']),
      place('Funchal', 'Madeira', 32.6669, -16.9241, 8, 1.0, ['90##-###']),
    ],
  },
  {
    code: 'IE', currency: 'EUR', weight: 3, salePerM2: 4200, rentPerM2: 20,
    localities: [
      place('Dublin', 'County Dublin', 53.3498, -6.2603, 50, 1.3, ['D0# @###', 'D1# @###', 'D2# @###']),
      place('Cork', 'County Cork', 51.8985, -8.4756, 20, 0.85, ['T12 @###', 'T23 @###']),
      place('Galway', 'County Galway', 53.2707, -9.0568, 12, 0.85, ['H91 @###']),
      place('Limerick', 'County Limerick', 52.6638, -8.6267, 10, 0.7, ['V94 @###']),
      place('Waterford', 'County Waterford', 52.2593, -7.1101, 8, 0.65, ['X91 @###']),
    ],
  },
  {
    code: 'BE', currency: 'EUR', weight: 4, salePerM2: 2900, rentPerM2: 12,
    localities: [
      place('Bruxelles', 'Brussels-Capital', 50.8503, 4.3517, 30, 1.2, ['10##', '11##', '12##']),
      place('Antwerpen', 'Antwerp', 51.2194, 4.4025, 20, 1.0, ['20##', '21##']),
      place('Gent', 'East Flanders', 51.0543, 3.7174, 15, 1.05, ['90##']),
      place('Liège', 'Liège', 50.6326, 5.5797, 12, 0.7, ['40##']),
      place('Brugge', 'West Flanders', 51.2093, 3.2247, 8, 1.0, ['80##', '83##']),
      place('Leuven', 'Flemish Brabant', 50.8798, 4.7005, 8, 1.15, ['30##']),
      place('Namur', 'Namur', 50.4674, 4.872, 7, 0.75, ['50##', '51##']),
    ],
  },
  {
    code: 'AT', currency: 'EUR', weight: 3, salePerM2: 4300, rentPerM2: 13,
    localities: [
      place('Wien', 'Wien', 48.2082, 16.3738, 45, 1.2, ['10#0', '11#0', '12#0']),
      place('Graz', 'Steiermark', 47.0707, 15.4395, 15, 0.8, ['80#0', '80#5']),
      place('Linz', 'Oberösterreich', 48.3069, 14.2858, 12, 0.8, ['40#0']),
      place('Salzburg', 'Salzburg', 47.8095, 13.055, 12, 1.3, ['502#']),
      place('Innsbruck', 'Tirol', 47.2692, 11.4041, 10, 1.3, ['60#0']),
      place('Klagenfurt', 'Kärnten', 46.6249, 14.305, 6, 0.75, ['90#0']),
    ],
  },
  {
    code: 'SE', currency: 'SEK', weight: 3, salePerM2: 42000, rentPerM2: 160,
    localities: [
      place('Stockholm', 'Stockholms län', 59.3293, 18.0686, 40, 1.6, ['11# ##', '12# ##']),
      place('Göteborg', 'Västra Götalands län', 57.7089, 11.9746, 20, 1.0, ['41# ##']),
      place('Malmö', 'Skåne län', 55.605, 13.0038, 15, 0.8, ['21# ##']),
      place('Uppsala', 'Uppsala län', 59.8586, 17.6389, 8, 0.95, ['75# ##']),
      place('Västerås', 'Västmanlands län', 59.6099, 16.5448, 6, 0.65, ['72# ##']),
      place('Örebro', 'Örebro län', 59.2753, 15.2134, 6, 0.6, ['70# ##']),
      place('Linköping', 'Östergötlands län', 58.4108, 15.6214, 5, 0.7, ['58# ##']),
    ],
  },
  {
    code: 'PL', currency: 'PLN', weight: 4, salePerM2: 10000, rentPerM2: 45,
    localities: [
      place('Warszawa', 'mazowieckie', 52.2297, 21.0122, 30, 1.5, ['0#-###']),
      place('Kraków', 'małopolskie', 50.0647, 19.945, 15, 1.3, ['30-###', '31-###']),
      place('Łódź', 'łódzkie', 51.7592, 19.456, 10, 0.7, ['9#-###']),
      place('Wrocław', 'dolnośląskie', 51.1079, 17.0385, 12, 1.15, ['5#-###']),
      place('Poznań', 'wielkopolskie', 52.4064, 16.9252, 10, 0.95, ['60-###', '61-###']),
      place('Gdańsk', 'pomorskie', 54.352, 18.6466, 10, 1.25, ['80-###']),
      place('Szczecin', 'zachodniopomorskie', 53.4285, 14.5528, 7, 0.75, ['70-###', '71-###']),
      place('Lublin', 'lubelskie', 51.2465, 22.5684, 6, 0.7, ['20-###']),
    ],
  },
];
