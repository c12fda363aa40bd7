/**
 * The client's data types, named from the types generated out of openapi/openapi.yaml
 * (`client/schema.d.ts`, by `npm run client:generate`): they change with the document, never by hand.
 */
import type { components, operations } from './schema';

/** A published listing: `id`, `country`, `listing_type`, `property_type`, and the data service's other fields. */
export type Listing = components['schemas']['Listing'];
/** One page of `GET /v1/properties`: `data` and `next_cursor` (`null` on the last page). */
export type ListingPage = components['schemas']['ListingPage'];
/** The answer of `GET /v1/ping`: the address the service saw, the key's id and tier. */
export type PingResult = components['schemas']['Ping'];
/** The body of every error answer. */
export type ErrorBody = components['schemas']['ErrorBody'];
/** The query of `GET /v1/properties` without the cursor, which the client manages. */
export type ListFilters = Omit<operations['listProperties']['parameters']['query'], 'cursor'>;
export type ListingType = NonNullable<ListFilters['listing_type']>;
/** An ISO 3166-1 alpha-2 code the gateway accepts (upper or lower case). */
export type CountryCode = ListFilters['country'];
export type PropertyType = NonNullable<ListFilters['property_type']>;
