// Drives kafkajs against a Klassik cluster.
//
//   node kafkajs_client.js produce <bootstrap> <topic> <count> [prefix]
//
// sends <count> records (key "k<i>", value "<prefix>-<i>") with acks=-1 in
// batches and prints "produced <n>" once all were acknowledged.
// kafkajs has no consumer without a consumer group, so its consuming side is
// exercised by the consumer-group tests.
'use strict'
const { Kafka, logLevel } = require('kafkajs')

async function main () {
  const [mode, bootstrap, topic, countStr, prefix = 'kafkajs'] = process.argv.slice(2)
  if (mode !== 'produce') throw new Error('usage: produce <bootstrap> <topic> <count> [prefix]')
  const count = parseInt(countStr, 10)
  const kafka = new Kafka({ clientId: 'klassik-test', brokers: [bootstrap], logLevel: logLevel.ERROR })
  const producer = kafka.producer({ allowAutoTopicCreation: false, idempotent: true, maxInFlightRequests: 1 })
  await producer.connect()
  const batch = 500
  for (let i = 0; i < count; i += batch) {
    const messages = []
    for (let j = i; j < Math.min(count, i + batch); j++) {
      messages.push({ key: `k${j}`, value: `${prefix}-${j}` })
    }
    await producer.send({ topic, acks: -1, messages })
  }
  await producer.disconnect()
  console.log(`produced ${count}`)
}

main().catch(err => { console.error(err); process.exit(1) })
