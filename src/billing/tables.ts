interface BillingAccountsTable {
  account_id: string;
  provider: string; // stripe
  customer_id: string | null; // cus_...
  seat_item_id: string | null; // si_...: the subscription item whose quantity is the seat count
  updated_at: string;
}

export interface BillingCheckoutsTable {
  id: string;
  provider: string;
  session_id: string; // the provider's checkout session (cs_...)
  user_id: string; // whose wallet the top-up credits
  account_id: string | null; // the caller's current account at checkout, where audit rows go
  amount: number; // minor units of currency (cents), an integer
  currency: string; // lower-case ISO 4217
  status: string; // open, credited
  created_at: string;
  expires_at: string;
  credited_at: string | null;
  credit_event_id: string | null;
}

interface BillingEventsTable {
  provider: string;
  event_id: string;
  type: string;
  received_at: string;
}

export interface BillingTables {
  billing_accounts: BillingAccountsTable;
  billing_checkouts: BillingCheckoutsTable;
  billing_events: BillingEventsTable;
}
